"""tf.train.Saver: variable values to a checkpoint file and back.

The file format is numpy's .npz: a zip archive (stored, not compressed) holding one
`<key>.npy` array per variable, keyed by the variable's node name (or the name given in a
dict var_list), plus `__checkpoint__.json`, a small UTF-8 JSON object that marks the file as
a graphdef checkpoint: {"format": "graphdef-checkpoint", "version": 1, "global_step": 7 or
null}. Any zip library and any .npy reader can read it (`np.load(path, allow_pickle=False)`
in Python); no pickles are written and none are ever loaded. Arrays are little-endian.

A save is atomic: the archive is written to a temporary file in the target directory,
flushed to disk, then renamed over the target, so a crash mid-save leaves the previous
checkpoint intact. A restore checks every variable before changing any.
"""

import json
import os
import re
import zipfile

import numpy as np

from graphdef.framework.dtypes import as_dtype
from graphdef.wire.atomic import remove_quietly, write_atomically
from graphdef.framework.errors import FailedPreconditionError, InvalidArgumentError
from graphdef.framework.graph import Operation, Tensor
from graphdef.ops.array import frozen
from graphdef.ops.state import Variable, global_variables
from graphdef.framework.shapes import TensorShape, show

FORMAT = "graphdef-checkpoint"
VERSION = 1
META_ENTRY = "__checkpoint__.json"
META_KEY = META_ENTRY[:-len(".json")]
STATE_FILENAME = "checkpoint"  # TF1's name for the file that records the latest checkpoint
# A fixed timestamp for zip entries, so the same values always give the same bytes.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# How many names an error lists before it summarises the rest.
_MAX_LISTED = 20


class CheckpointError(InvalidArgumentError):
    """A checkpoint that cannot be read, or that does not match the variables being restored."""


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


# -- writing ---------------------------------------------------------------------------------

def _entry_info(name):
    info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    return info


def _little_endian(array):
    array = np.asarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def _write_archive(f, arrays, global_step):
    """The .npz: one .npy entry per variable (written as np.savez writes them), then the metadata."""
    meta = {"format": FORMAT, "version": VERSION, "global_step": global_step}
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in arrays:
            with archive.open(_entry_info(key + ".npy"), "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, _little_endian(array), allow_pickle=False)
        archive.writestr(_entry_info(META_ENTRY), json.dumps(meta, sort_keys=True).encode("utf-8"))


# -- reading ---------------------------------------------------------------------------------

def _open_checkpoint(path):
    """The zip archive of a graphdef checkpoint, and its metadata; CheckpointError in one line."""
    path = os.fspath(path)
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such checkpoint file") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path}: is a directory, not a checkpoint file "
                              "(tf.train.latest_checkpoint(dir) finds the newest one)") from None
    except zipfile.BadZipFile:
        raise CheckpointError(f"{path}: not a graphdef checkpoint (not an .npz/zip archive)") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot read the checkpoint: {e.strerror or e}") from None
    try:
        meta = _read_meta(archive, path)
    except BaseException:
        archive.close()
        raise
    return archive, meta


def _read_meta(archive, path):
    try:
        meta = json.loads(archive.read(META_ENTRY).decode("utf-8"))
    except KeyError:
        raise CheckpointError(f"{path}: not a graphdef checkpoint (a zip archive without {META_ENTRY})") from None
    except (ValueError, zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"{path}: not a graphdef checkpoint (unreadable {META_ENTRY}: "
                              f"{_one_line(e)})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a graphdef checkpoint ({META_ENTRY} does not say "
                              f"\"format\": \"{FORMAT}\")")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint format version {meta.get('version')!r}; "
                              f"this graphdef reads version {VERSION}")
    return meta


def _entries(archive):
    """{key: zip entry name} for every array in the archive."""
    return {name[:-4]: name for name in archive.namelist() if name.endswith(".npy")}


def _read_array(archive, entry):
    """The entry's array in native byte order; ValueError says why it cannot be read."""
    try:
        with archive.open(entry) as f:
            array = np.lib.format.read_array(f, allow_pickle=False)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"unreadable ({_one_line(e)})") from None
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


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
    """tf.train.list_variables: [(key, shape)] of every array in the checkpoint, sorted by key."""
    archive, _ = _open_checkpoint(path)
    with archive:
        found = []
        for key, entry in sorted(_entries(archive).items()):
            try:
                found.append((key, list(_read_array(archive, entry).shape)))
            except ValueError as e:
                raise CheckpointError(f"{path}: '{key}' is {e}") from None
        return found


def load_variable(path, name):
    """tf.train.load_variable: the array saved under `name`."""
    archive, _ = _open_checkpoint(path)
    with archive:
        entry = _entries(archive).get(name)
        if entry is None:
            raise CheckpointError(f"{path}: no variable '{name}' in the checkpoint (it holds "
                                  f"{_listing(_entries(archive))})")
        try:
            return _read_array(archive, entry)
        except ValueError as e:
            raise CheckpointError(f"{path}: '{name}' is {e}") from None


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
    return path if os.path.isfile(path) else None


def checkpoint_exists(path):
    """tf.train.checkpoint_exists: whether `path` is a readable graphdef checkpoint."""
    try:
        _open_checkpoint(path)[0].close()
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

        Returns the path written. No .meta file is written (write_meta_graph is accepted for
        TF1 scripts and ignored): save the graph itself with tf.save or tf.io.write_graph.
        """
        _check_session(sess, self._slots, "save")
        save_path = os.fspath(save_path)
        step = None if global_step is None else _step_number(sess, global_step)
        path = save_path if step is None else f"{save_path}-{step}"
        state_name = latest_filename or STATE_FILENAME
        if write_state and os.path.basename(path) == state_name:
            raise ValueError(f"Saver.save: '{state_name}' is the file that records the latest checkpoint; "
                             "choose another save_path")
        arrays = self._current_values(sess)
        write_atomically(path, lambda f: _write_archive(f, arrays, step))
        self._remember(path)
        if write_state:
            _write_state(os.path.dirname(os.path.abspath(path)), path, self._last_checkpoints, state_name)
        return path

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
                remove_quietly(self._last_checkpoints.pop(0))

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
        archive, _ = _open_checkpoint(save_path)
        with archive:
            values, problems = self._read_all(archive)
            if problems:
                raise CheckpointError(
                    f"Saver.restore: {save_path} does not match the graph in {len(problems)} "
                    f"variable{'s' if len(problems) != 1 else ''}; nothing was restored:\n  "
                    + "\n  ".join(problems)
                    + f"\n(the checkpoint holds {_listing(_entries(archive))})")
        for slot, value in zip(self._slots, values):
            sess._variables[slot.node] = frozen(value)

    def _read_all(self, archive):
        """(arrays in slot order, problem lines): everything is read and checked before any is used."""
        entries = _entries(archive)
        values, problems = [], []
        for slot in self._slots:
            expected = _describe(slot.dtype.np, slot.shape)
            entry = entries.get(slot.key)
            if entry is None:
                problems.append(f"{slot.label()}: expected {expected}, not in the checkpoint")
                values.append(None)
                continue
            try:
                array = _read_array(archive, entry)
            except ValueError as e:
                problems.append(f"{slot.label()}: expected {expected}, found an entry that is {e}")
                values.append(None)
                continue
            if array.dtype != slot.dtype.np or not slot.shape.is_compatible_with(TensorShape(array.shape)):
                problems.append(f"{slot.label()}: expected {expected}, "
                                f"found {_describe(array.dtype, array.shape)}")
            values.append(array)
        return values, problems
