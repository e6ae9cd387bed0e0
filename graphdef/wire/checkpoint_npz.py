"""graphdef's first checkpoint format, still read: numpy's .npz with a marker entry.

A zip archive (stored, not compressed) holding one `<key>.npy` array per variable, keyed by
the variable's node name (or the name given in a dict var_list), plus `__checkpoint__.json`,
a small UTF-8 JSON object that marks the file as a graphdef checkpoint: {"format":
"graphdef-checkpoint", "version": 1, "global_step": 7 or null}. Savers now write TensorFlow's
format (graphdef.wire.tensor_bundle); restore, list_variables and load_variable read both.
No pickles are ever loaded.
"""

import json
import os
import zipfile

import numpy as np

from graphdef.framework.errors import InvalidArgumentError

FORMAT = "graphdef-checkpoint"
VERSION = 1
META_ENTRY = "__checkpoint__.json"
META_KEY = META_ENTRY[:-len(".json")]
# A fixed timestamp for zip entries, so the same values always give the same bytes.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class CheckpointError(InvalidArgumentError):
    """A checkpoint that cannot be read, or that does not match the variables being restored."""


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


# -- writing ---------------------------------------------------------------------------------

def _entry_info(name):
    info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    return info


def _little_endian(array):
    array = np.asarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def write_npz(f, arrays, global_step=None):
    """The .npz: one .npy entry per variable (written as np.savez writes them), then the metadata."""
    meta = {"format": FORMAT, "version": VERSION, "global_step": global_step}
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in arrays:
            with archive.open(_entry_info(key + ".npy"), "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, _little_endian(array), allow_pickle=False)
        archive.writestr(_entry_info(META_ENTRY), json.dumps(meta, sort_keys=True).encode("utf-8"))


# -- reading ---------------------------------------------------------------------------------

def open_npz(path):
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




class NpzCheckpoint:
    """An open .npz checkpoint with the interface Saver.restore reads through."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._archive, self.meta = open_npz(self.path)
        self._entries = _entries(self._archive)

    def keys(self):
        return sorted(self._entries)

    def shape(self, key):
        return list(self.read(key).shape)

    def read(self, key):
        """The array saved under `key`; ValueError says why it cannot be read."""
        return _read_array(self._archive, self._entries[key])

    def close(self):
        self._archive.close()
