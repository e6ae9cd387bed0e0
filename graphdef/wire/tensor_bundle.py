"""TensorFlow's checkpoint format (tensor bundle, V2), read and written without TensorFlow.

A checkpoint PREFIX is two files, the ones tf.train.Saver and tf.train.Checkpoint write:
  PREFIX.data-00000-of-00001   every tensor's raw little-endian bytes, one after another
  PREFIX.index                 a sorted string table (graphdef.wire.sstable): key "" holds a
                               BundleHeaderProto, each tensor's name a BundleEntryProto (dtype,
                               shape, shard, offset, size, masked crc32c of the bytes)
Writing stages both files completely, then renames the data file into place and the index
last (graphdef.wire.atomic.write_files_atomically): a failed save leaves the previous
checkpoint as it was, and a reader that finds an index finds its data. Reading checks every entry (dtype, shape,
offset and size inside its shard, size equal to dtype x shape, checksum, the size limit)
and reads one tensor at a time, so a damaged or hostile checkpoint gives one
CheckpointFormatError line. Sliced (partitioned) variables are refused by name. String
tensors are written and read in TF's layout (read_strings says it): `read` gives an object
array of bytes, `read_strings` the flat list (TF2's object graph).
"""

import os
import stat

import numpy as np

from graphdef._proto import graph_pb2, tensor_bundle_pb2
from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.wire import sstable
from graphdef.wire.atomic import write_files_atomically
from graphdef.wire.serialize import shape_from_proto, shape_to_proto

VERSION_PRODUCER = 1  # TF's kTensorBundleVersion at the time of the V2 format


class CheckpointFormatError(ValueError):
    """A TF-format checkpoint that cannot be read; the message names the file and the entry."""


def data_path(prefix, shard=0, num_shards=1):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix):
    return f"{prefix}.index"


def exists(prefix):
    # anything there: a FIFO or a directory in its place is then refused by name, as graphrun-cc does
    return os.path.exists(index_path(prefix))


# -- writing ----------------------------------------------------------------------------------

def write(prefix, tensors):
    """Writes {name: ndarray} as a one-shard TF checkpoint at `prefix`."""
    entries, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        dtype = dtypes.as_dtype(array.dtype)
        if dtype is dtypes.string:
            raw, crc = _string_bytes(dtypes.string_array(array).reshape(-1).tolist())
        else:
            raw = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False)).tobytes()
            crc = sstable.masked_crc32c(raw)
        entry = tensor_bundle_pb2.BundleEntryProto(dtype=dtype.enum, shard_id=0, offset=offset, size=len(raw),
                                                   crc32c=crc)
        shape_to_proto(array.shape, entry.shape)
        entries[name.encode()] = entry.SerializeToString()
        chunks.append(raw)
        offset += len(raw)
    header = tensor_bundle_pb2.BundleHeaderProto(num_shards=1, endianness=tensor_bundle_pb2.BundleHeaderProto.LITTLE,
                                                 version=graph_pb2.VersionDef(producer=VERSION_PRODUCER))
    entries[b""] = header.SerializeToString()
    table = sstable.build(entries)
    write_files_atomically([(data_path(prefix), lambda f: [f.write(chunk) for chunk in chunks]),
                            (index_path(prefix), lambda f: f.write(table))])


def _string_bytes(items):
    """A string tensor as TF writes it (see Bundle.read_strings) and the entry's masked crc32c."""
    lengths = b"".join(sstable._varint(len(b)) for b in items)
    fixed = b"".join(len(b).to_bytes(4 if len(b) < 1 << 32 else 8, "little") for b in items)
    lengths_crc = sstable.masked_crc32c(fixed).to_bytes(4, "little")
    data = b"".join(items)
    return lengths + lengths_crc + data, sstable.masked_crc32c(fixed + lengths_crc + data)


# -- reading ----------------------------------------------------------------------------------

class Entry:
    """One tensor's BundleEntryProto, checked. `unreadable` says why graphdef cannot load it (a
    string tensor, such as TF2's object graph, or a sliced variable); the rest of the bundle reads."""

    __slots__ = ("name", "dtype", "shape", "shard", "offset", "size", "crc", "unreadable", "is_string")

    def __init__(self, name, proto, where):
        self.name, self.unreadable = name, None
        self.is_string = proto.dtype == graph_pb2.DT_STRING and not proto.slices
        self.shard, self.offset, self.size, self.crc = proto.shard_id, proto.offset, proto.size, proto.crc32c
        if any(d.size < -1 for d in proto.shape.dim):  # -1 is unknown; below it the index is damaged
            raise CheckpointFormatError(f"{where}: negative dimension in shape {shape_text(proto.shape)}")
        self.shape = shape_from_proto(proto.shape)
        try:
            self.dtype = dtypes.as_dtype(proto.dtype)
        except (TypeError, ValueError, KeyError):
            self.dtype = None
        if self.dtype is None or (self.dtype is not dtypes.string
                                  and np.dtype(self.dtype.np).kind not in "biuf"):  # variant is a dtype, not bytes
            self.dtype = None
            # graphrun-cc's words (it holds no strings yet): both runtimes refuse such an entry alike
            self.unreadable = f"dtype enum {proto.dtype} (graphdef reads numeric and bool tensors)"
            return
        if proto.slices:
            self.unreadable = "a sliced (partitioned) variable, which graphdef does not read"
            return
        if self.is_string:  # its size is its lengths and bytes, and its shape too: read_strings checks them
            if self.offset < 0:
                raise CheckpointFormatError(f"{where}: offset {self.offset} is negative; the index is damaged")
            return
        if not self.shape.is_fully_defined():
            raise CheckpointFormatError(f"{where}: shape {shape_text(proto.shape)} is not fully known")
        expected = int(np.prod(self.shape.as_list(), dtype=object)) * np.dtype(self.dtype.np).itemsize
        if self.offset < 0:
            raise CheckpointFormatError(f"{where}: offset {self.offset} is negative; the index is damaged")
        if self.size != expected:
            raise CheckpointFormatError(f"{where}: {self.size} bytes at offset {self.offset}, but "
                                        f"{self.dtype.name} {shape_text(proto.shape)} needs {expected}")


def shape_text(proto):
    """An entry's shape as the file holds it, "[3, -1]" or "<unknown>": graphrun-cc words it alike."""
    return "<unknown>" if proto.unknown_rank else "[" + ", ".join(str(d.size) for d in proto.dim) + "]"


class Bundle:
    """An open TF checkpoint: `entries` by name; `read(name)` loads and checks one tensor."""

    def __init__(self, prefix):
        self.prefix = str(prefix)
        path = index_path(self.prefix)
        try:
            _check_regular(path)
            with open(path, "rb") as f:
                table = sstable.parse(f.read(), path)
        except OSError as e:
            raise CheckpointFormatError(f"{path}: {e.strerror}") from None
        except sstable.TableError as e:
            raise CheckpointFormatError(str(e)) from None
        header = tensor_bundle_pb2.BundleHeaderProto()
        try:
            header.ParseFromString(table.pop(b"", b""))
        except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
            raise CheckpointFormatError(f"{path}: unreadable bundle header") from None
        if header.endianness != header.LITTLE:
            raise CheckpointFormatError(f"{path}: a big-endian checkpoint, which graphdef does not read")
        if not 1 <= header.num_shards <= 1 << 16:
            raise CheckpointFormatError(f"{path}: {header.num_shards} shards")
        self.num_shards = header.num_shards
        self.entries = {}
        for key, value in table.items():
            name = sstable.key_text(key)
            proto = tensor_bundle_pb2.BundleEntryProto()
            try:
                proto.ParseFromString(value)
            except Exception:  # noqa: BLE001
                raise CheckpointFormatError(f"{path}: entry '{name}' is not a BundleEntryProto") from None
            entry = Entry(name, proto, f"{path}: entry '{name}'")
            if not 0 <= entry.shard < self.num_shards:
                raise CheckpointFormatError(f"{path}: entry '{name}' is in shard {entry.shard} of {self.num_shards}")
            self.entries[name] = entry

    def read(self, name):
        entry = self.entries[name]
        path = data_path(self.prefix, entry.shard, self.num_shards)
        where = f"{path}: tensor '{name}'"
        if entry.unreadable:
            raise CheckpointFormatError(f"{where}: {entry.unreadable}")
        if entry.is_string:
            items = self.read_strings(name)
            out = np.empty(len(items), dtype=object)
            out[:] = items
            return out.reshape(entry.shape.as_list())
        check_size(tuple(entry.shape.as_list()), entry.dtype.np, what="value", where=where)
        raw = self._raw(entry, path, where)
        dtype = np.dtype(entry.dtype.np).newbyteorder("<")
        return np.frombuffer(raw, dtype).astype(entry.dtype.np).reshape(entry.shape.as_list())

    def read_strings(self, name):
        """A string tensor's elements, as a flat list of bytes. TF writes one as each element's
        length (varint), a masked crc32c of the lengths, then the bytes; the entry's checksum
        covers the lengths (little-endian uint32s, uint64s past 4 GiB), that crc's four bytes,
        and the bytes."""
        entry = self.entries[name]
        path = data_path(self.prefix, entry.shard, self.num_shards)
        where = f"{path}: tensor '{name}'"
        if not entry.is_string or not entry.shape.is_fully_defined():
            raise CheckpointFormatError(f"{where}: not a string tensor of known shape")
        count = int(np.prod(entry.shape.as_list(), dtype=object))
        if count > entry.size:  # each element takes at least its one-byte length
            raise CheckpointFormatError(f"{where}: {count} strings cannot fit in {entry.size} bytes")
        check_size((entry.size,), np.uint8, what="value", where=where)
        raw = self._raw(entry, path, where, check_crc=False)
        lengths, pos = [], 0
        try:
            for _ in range(count):
                length, pos = sstable._read_varint(raw, pos, where)
                lengths.append(length)
        except sstable.TableError as e:
            raise CheckpointFormatError(str(e)) from None
        lengths_crc, data = raw[pos:pos + 4], raw[pos + 4:]
        if len(lengths_crc) != 4 or sum(lengths) != len(data):
            raise CheckpointFormatError(f"{where}: the string lengths do not match the {entry.size} bytes")
        covered = b"".join(n.to_bytes(4 if n < 1 << 32 else 8, "little") for n in lengths) + lengths_crc + data
        if sstable.masked_crc32c(covered) != entry.crc:
            raise CheckpointFormatError(f"{where}: the bytes fail their checksum (the file is damaged)")
        out, pos = [], 0
        for length in lengths:
            out.append(bytes(data[pos:pos + length]))
            pos += length
        return out

    def _raw(self, entry, path, where, check_crc=True):
        try:
            _check_regular(path)
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if entry.offset + entry.size > f.tell():
                    raise CheckpointFormatError(f"{where}: bytes {entry.offset}..{entry.offset + entry.size} lie "
                                                f"past the file's end ({f.tell()} bytes)")
                f.seek(entry.offset)
                raw = f.read(entry.size)
        except OSError as e:
            raise CheckpointFormatError(f"{path}: {e.strerror}") from None
        if check_crc and sstable.masked_crc32c(raw) != entry.crc:
            raise CheckpointFormatError(f"{where}: the bytes fail their checksum (the file is damaged)")
        return raw


def _check_regular(path):
    """Raises OSError for a missing file; a FIFO or a directory would block or fail open() obscurely."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise CheckpointFormatError(f"{path}: not a regular file; put the file saved with the model there")
