"""tf.train.Saver: variable values to a checkpoint and back, in TensorFlow's own format.

Saver.save(sess, "dir/model.ckpt", global_step=7) writes what TensorFlow's Saver writes:
dir/model.ckpt-7.index and dir/model.ckpt-7.data-00000-of-00001 (the V2 tensor bundle,
graphdef.wire.tensor_bundle), and the `checkpoint` state file naming the newest ones, so
TensorFlow restores graphdef's checkpoints and graphdef restores TensorFlow's. Restore,
list_variables and load_variable also read graphdef's older .npz checkpoints
(graphdef.wire.checkpoint_npz). No pickles are written and none are ever loaded.

A save is atomic file by file, data first and index last, so a crash mid-save leaves the
previous checkpoint intact and never an index without its data. A restore checks every
variable before changing any.
"""

import os
import re

import numpy as np

from graphdef.framework.dtypes import as_dtype
from graphdef._proto import meta_graph_pb2
from graphdef.framework.graph import get_default_graph
from graphdef.wire import meta_graph, tensor_bundle
from graphdef.wire.serialize import import_graph_def
from graphdef.wire.atomic import remove_quietly, write_atomically
from graphdef.wire.checkpoint_npz import META_KEY, CheckpointError, NpzCheckpoint
from graphdef.framework.errors import FailedPreconditionError
from graphdef.framework.graph import Operation, Tensor
from graphdef.ops.array import frozen
from graphdef.ops.state import Variable, global_variables
from graphdef.framework.shapes import TensorShape, show

STATE_FILENAME = "checkpoint"  # TF1's name for the file that records the latest checkpoint
# How many names an error lists before it summarises the rest.
_MAX_LISTED = 20


# -- the variables a Saver handles ------------------------------------------------------------

class _Slot:
    """One saved variable: its key in the file, its VariableV2 node, dtype and static shape."""

    __slots__ = ("key", "node", "graph", "dtype", "shape")

    def __init__(self, key, ref):
        self.key = key
        self.node = ref.op.name
        self.graph = ref.graph
        self.dtype = ref.dtype
        self.shape = ref.shape

    def label(self):
        return f"'{self.key}'" if self.key == self.node else f"'{self.key}' (variable '{self.node}')"


def _variable_ref(item):
    """The VariableV2 output behind a Variable, its tensor or its op; TypeError otherwise."""
    if isinstance(item, Variable):
        return item._variable
    if isinstance(item, Operation) and item.type == "VariableV2":
        return item.outputs[0]
    if isinstance(item, Tensor) and item.op.type == "VariableV2":
        return item
    raise TypeError(f"Saver: {item!r} is not a variable")


def _slots(var_list):
    if var_list is None:
        var_list = global_variables()
        if not var_list:
            raise ValueError("Saver: no variables to save; create a tf.Variable first, or pass var_list")
    if isinstance(var_list, dict):
        pairs = [(key, _variable_ref(v)) for key, v in var_list.items()]
    else:
        refs = [_variable_ref(v) for v in var_list]
        pairs = [(ref.op.name, ref) for ref in refs]
    if not pairs:
        raise ValueError("Saver: var_list is empty")
    return _checked_slots(pairs)


def _checked_slots(pairs):
    slots, seen = [], set()
    for key, ref in pairs:
        if not isinstance(key, str) or not key or key == META_KEY:
            raise ValueError(f"Saver: {key!r} cannot name a variable in a checkpoint")
        if key in seen:
            raise ValueError(f"Saver: '{key}' is listed twice in var_list")
        seen.add(key)
        slots.append(_Slot(key, ref))
    return slots


# -- reading either format -------------------------------------------------------------------

class _BundleCheckpoint:
    """A TF-format checkpoint with the interface of checkpoint_npz.NpzCheckpoint."""

    def __init__(self, prefix):
        self.path = prefix
        try:
            self._bundle = tensor_bundle.Bundle(prefix)
        except tensor_bundle.CheckpointFormatError as e:
            raise CheckpointError(str(e)) from None

    def keys(self):
        return sorted(self._bundle.entries)

    def shape(self, key):
        return self._bundle.entries[key].shape.as_list()

    def read(self, key):
        try:
            return self._bundle.read(key)
        except tensor_bundle.CheckpointFormatError as e:
            raise ValueError(f"unreadable ({e})") from None

    def close(self):
        pass


def open_checkpoint(path):
    """The checkpoint at `path`: TensorFlow's (PATH.index and its data) or a graphdef .npz file."""
    path = os.fspath(path)
    if tensor_bundle.exists(path):
        return _BundleCheckpoint(path)
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such checkpoint (neither {path}.index, TensorFlow's format, "
                              "nor a graphdef .npz file)")
    return NpzCheckpoint(path)


def _checkpoint_files(path):
    """Every file a checkpoint at `path` may consist of, in either format."""
    directory, base = os.path.split(os.path.abspath(path))
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    ours = {base, base + ".index", base + ".meta"}
    return [os.path.join(directory, n) for n in names if n in ours or n.startswith(base + ".data-")]


def _describe(dtype, shape):
    try:
        name = as_dtype(dtype).name
    except TypeError:
        name = str(dtype)
    return f"{name} {show(shape)}"


def _listing(names):
    names = sorted(names)
    shown = ", ".join(f"'{n}'" for n in names[:_MAX_LISTED])
    more = len(names) - _MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "") if names else "no variables"


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def list_variables(path):
    """tf.train.list_variables: [(key, shape)] of every tensor in the checkpoint, sorted by key."""
    checkpoint = open_checkpoint(path)
    try:
        found = []
        for key in checkpoint.keys():
            try:
                found.append((key, list(checkpoint.shape(key))))
            except ValueError as e:
                raise CheckpointError(f"{path}: '{key}' is {e}") from None
        return found
    finally:
        checkpoint.close()


def load_variable(path, name):
    """tf.train.load_variable: the array saved under `name`."""
    checkpoint = open_checkpoint(path)
    try:
        if name not in checkpoint.keys():
            raise CheckpointError(f"{path}: no variable '{name}' in the checkpoint (it holds "
                                  f"{_listing(checkpoint.keys())})")
        try:
            return checkpoint.read(name)
        except ValueError as e:
            raise CheckpointError(f"{path}: '{name}' is {e}") from None
    finally:
        checkpoint.close()


# -- the checkpoint state file (TF1's `checkpoint`, so latest_checkpoint works) ---------------

def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_STATE_LINE = re.compile(r'^\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')
_UNESCAPE = re.compile(r"\\(.)")


def _write_state(directory, latest, all_paths, filename):
    """TF1's CheckpointState in text form; paths are relative, so the directory can move."""
    lines = [f"model_checkpoint_path: {_quote(os.path.basename(latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(os.path.basename(p))}" for p in all_paths]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    write_atomically(os.path.join(directory, filename), lambda f: f.write(data))


def _read_state(directory, filename):
    """{field: [values]} from the state file, or None when there is none."""
    try:
        with open(os.path.join(directory, filename), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return None
    fields = {}
    for line in text.splitlines():
        m = _STATE_LINE.match(line)
        if m:
            value = _UNESCAPE.sub(lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
            fields.setdefault(m.group(1), []).append(value)
    return fields


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """tf.train.latest_checkpoint: the newest checkpoint a Saver recorded in `checkpoint_dir`, or None."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    fields = _read_state(checkpoint_dir, latest_filename or STATE_FILENAME)
    if not fields or "model_checkpoint_path" not in fields:
        return None
    path = fields["model_checkpoint_path"][-1]
    if not os.path.isabs(path):
        path = os.path.join(checkpoint_dir, path)
    return path if tensor_bundle.exists(path) or os.path.isfile(path) else None


def checkpoint_exists(path):
    """tf.train.checkpoint_exists: whether `path` is a readable checkpoint, in either format."""
    try:
        open_checkpoint(path).close()
    except CheckpointError:
        return False
    return True


# -- the Saver -------------------------------------------------------------------------------

def _check_session(sess, slots, what):
    if getattr(sess, "_closed", False):
        raise RuntimeError(f"Saver.{what}: the session is closed")
    others = [s.node for s in slots if s.graph is not sess.graph]
    if others:
        raise ValueError(f"Saver.{what}: variables {_listing(others)} belong to another graph "
                         "than the session's")


def _step_number(sess, global_step):
    """An int from an int, a numpy integer, or a Variable/Tensor evaluated in the session."""
    if isinstance(global_step, (Variable, Tensor)):
        global_step = sess.run(global_step)
    value = np.asarray(global_step)
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise TypeError(f"Saver.save: global_step must be an integer, got {global_step!r}")
    return int(value)


class Saver:
    """tf.compat.v1.train.Saver: saves and restores variable values (see the module doc for the file)."""

    def __init__(self, var_list=None, max_to_keep=5, name=None):
        """var_list: None (every global variable of the default graph, now), Variables, or {key: Variable}.

        max_to_keep: how many of this Saver's newest checkpoints to keep (None or 0 keeps all).
        name: accepted for TF1 scripts; a Saver adds no nodes to the graph, so it names nothing.
        """
        self._slots = _slots(var_list)
        self._max_to_keep = max_to_keep
        self._last_checkpoints = []

    @property
    def last_checkpoints(self):
        """This Saver's checkpoints that are still kept, oldest first."""
        return list(self._last_checkpoints)

    def save(self, sess, save_path, global_step=None, latest_filename=None, write_meta_graph=True,
             write_state=True):
        """Writes the variables' current values to `save_path` (`save_path-<step>` with global_step).

        Returns the checkpoint's prefix (its files are PREFIX.index and PREFIX.data-00000-of-00001).
        With write_meta_graph (the default, as in TF1), PREFIX.meta holds the session's graph as a
        MetaGraphDef with TF1's saver ops added, which tf.train.import_meta_graph reads in either
        library.
        """
        _check_session(sess, self._slots, "save")
        save_path = os.fspath(save_path)
        step = None if global_step is None else _step_number(sess, global_step)
        path = save_path if step is None else f"{save_path}-{step}"
        state_name = latest_filename or STATE_FILENAME
        if write_state and os.path.basename(path) == state_name:
            raise ValueError(f"Saver.save: '{state_name}' is the file that records the latest checkpoint; "
                             "choose another save_path")
        tensor_bundle.write(path, dict(self._current_values(sess)))
        if write_meta_graph:
            self._write_meta_graph(sess.graph, path + ".meta")
        self._remember(path)
        if write_state:
            _write_state(os.path.dirname(os.path.abspath(path)), path, self._last_checkpoints, state_name)
        return path

    def _write_meta_graph(self, graph, path):
        with graph.as_default():
            variables = global_variables()
        saved = [(s.key, s.node, s.dtype.enum) for s in self._slots]
        data = meta_graph.build(graph.as_graph_def(), saved, variables).SerializeToString()
        write_atomically(path, lambda f: f.write(data))

    def _current_values(self, sess):
        missing = [s.node for s in self._slots if s.node not in sess._variables]
        if missing:
            raise FailedPreconditionError(
                f"Saver.save: variables {_listing(missing)} are not initialized; run their initializer "
                "(or restore a checkpoint) first")
        return [(s.key, sess._variables[s.node]) for s in self._slots]

    def _remember(self, path):
        """Records `path` as the newest checkpoint and deletes the oldest beyond max_to_keep."""
        if path in self._last_checkpoints:
            self._last_checkpoints.remove(path)
        self._last_checkpoints.append(path)
        if self._max_to_keep:
            while len(self._last_checkpoints) > self._max_to_keep:
                for old in _checkpoint_files(self._last_checkpoints.pop(0)):
                    remove_quietly(old)

    def restore(self, sess, save_path):
        """Sets every variable from the checkpoint, or, if any is missing or mismatched, none.

        The error lists every problem: a variable the file lacks, or one whose dtype or shape
        differs (expected, from the graph, and found, in the file). Arrays the file holds
        beyond var_list are ignored, so a subset can be restored.
        """
        if save_path is None:
            raise CheckpointError("Saver.restore: save_path is None (tf.train.latest_checkpoint "
                                  "returns None when the directory has no checkpoint)")
        _check_session(sess, self._slots, "restore")
        save_path = os.fspath(save_path)
        checkpoint = open_checkpoint(save_path)
        try:
            values, problems = self._read_all(checkpoint)
            if problems:
                raise CheckpointError(
                    f"Saver.restore: {save_path} does not match the graph in {len(problems)} "
                    f"variable{'s' if len(problems) != 1 else ''}; nothing was restored:\n  "
                    + "\n  ".join(problems)
                    + f"\n(the checkpoint holds {_listing(checkpoint.keys())})")
        finally:
            checkpoint.close()
        for slot, value in zip(self._slots, values):
            sess._variables[slot.node] = frozen(value)

    def _read_all(self, checkpoint):
        """(arrays in slot order, problem lines): everything is read and checked before any is used."""
        entries = set(checkpoint.keys())
        values, problems = [], []
        for slot in self._slots:
            expected = _describe(slot.dtype.np, slot.shape)
            if slot.key not in entries:
                problems.append(f"{slot.label()}: expected {expected}, not in the checkpoint")
                values.append(None)
                continue
            try:
                array = checkpoint.read(slot.key)
            except ValueError as e:
                problems.append(f"{slot.label()}: expected {expected}, found an entry that is {e}")
                values.append(None)
                continue
            if array.dtype != slot.dtype.np or not slot.shape.is_compatible_with(TensorShape(array.shape)):
                problems.append(f"{slot.label()}: expected {expected}, "
                                f"found {_describe(array.dtype, array.shape)}")
            values.append(array)
        return values, problems


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **_ignored):
    """tf.train.import_meta_graph: adds a .meta file's graph (without its saver ops) to the
    default graph; returns a Saver of its variables, keyed as the file's saver keyed them, or
    None when it has none."""
    meta, path = meta_graph_or_file, None
    if not isinstance(meta, meta_graph_pb2.MetaGraphDef):
        path = os.fspath(meta_graph_or_file)
        meta = meta_graph_pb2.MetaGraphDef()
        try:
            with open(path, "rb") as f:
                meta.ParseFromString(f.read())
        except OSError as e:
            raise CheckpointError(f"{path}: {e.strerror}") from None
        except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
            raise CheckpointError(f"{path}: not a MetaGraphDef (it does not parse as one)") from None
    graph_def = meta_graph.without_saver(meta.graph_def)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    import_graph_def(graph_def, name=import_scope or "")
    keys = meta_graph.restored_variables(meta.graph_def)
    if not keys:
        return None
    graph = get_default_graph()
    prefix = f"{import_scope}/" if import_scope else ""
    where = path if not isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef) else "the meta graph"
    ops = {}
    for node, key in keys.items():
        try:
            ops[key] = op = graph.get_operation_by_name(prefix + node)
            _variable_ref(op)
        except KeyError:  # a saver wired to a node the file does not have
            raise CheckpointError(f"{where}: the saver restores '{key}' into node '{node}', which the graph "
                                  "does not have") from None
        except TypeError:  # a file whose saver restores into something else: name it, as a file error
            raise CheckpointError(f"{where}: the saver restores '{key}' into node '{op.name}' ({op.type}), "
                                  "which is not a variable") from None
    try:
        return Saver(ops)
    except (TypeError, ValueError) as e:  # the Saver's own checks of names and keys
        raise CheckpointError(f"{where}: {e}") from None
