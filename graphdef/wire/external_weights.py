"""Const values stored outside the GraphDef, in a sidecar weights file, memory-mapped on load.

protobuf refuses a message of 2 GB or more, so a GraphDef holding its weights cannot pass that
size. A model written with external weights is two files side by side:

    model.pb       the GraphDef; each external Const keeps op Const, attr `dtype`, and a `value`
                   TensorProto with dtype and shape but no content, plus the node attr
                   `_external_value` (below)
    model.weights  a 64-byte header, then each tensor's raw little-endian row-major bytes at an
                   offset that is a multiple of 64 (zero padding between), so a mapped tensor is
                   aligned for SIMD loads

The header (all little-endian): bytes 0-7 the magic b"GDWEIGHT", 8-11 the format version (1), 12-15
the alignment (64), 16-23 the file's size as written, 24-39 a 16-byte tag (blake2b of every value's
offset, length and crc32c: the same model always writes the same bytes), 40-63 zeros.
`_external_value` is an AttrValue list whose `s` holds [the weights file's name, the tag as 32 hex
digits] and whose `i` holds [offset, length in bytes, crc32c of those bytes]. The name is a plain
file name in the directory of the .pb (no directory part), so a model file can name no other file on
the machine. The tag pairs the two files: a .pb beside a weights file written with other values is
refused at load, cheaply.

Reading maps the weights file once (read-only) and every external Const's value is an ndarray
over the mapping: nothing is copied, pages are read when a kernel touches them, and the arrays
are read-only like every graph-owned array. At load the header, the tag, each offset and length
(against the file's size and against dtype * shape) are checked; the crc32c is not, because
checking it reads every byte and would make loading cost the whole file (the point of mapping
is that a Gather from a huge table touches a few pages). The crc32c is checked whenever the
bytes are copied anyway (writing the model again, `graphrun convert --inline-weights`) and at
load when GRAPHDEF_VERIFY_WEIGHTS=1 is set.

TensorFlow ignores attrs whose names start with "_", so it imports such a file without error but
its external Consts are zeros: `graphrun convert --inline-weights` writes a self-contained .pb for
a model under 2 GB. graphdef refuses a Const whose weights file is missing or does not match.

graphrun-cc reads the same format (runner/graph/external_weights.cc).
"""

import hashlib
import mmap
import os
import re
import struct
import weakref

import google_crc32c
import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.shapes import TensorShape, show
from graphdef.wire.atomic import write_files_atomically

ATTR = "_external_value"
SUFFIX = ".weights"
MAGIC = b"GDWEIGHT"
VERSION = 1
ALIGNMENT = 64
HEADER_SIZE = 64
# Const values of at least this many bytes go to the weights file when it is written
DEFAULT_THRESHOLD = 1024
# never less: a stub's in-memory marker (below) can then never be a real value's bytes
MIN_THRESHOLD = 64
VERIFY_ENV = "GRAPHDEF_VERIFY_WEIGHTS"
# An external Const read through read_graph_def carries this as its tensor_content in memory
# (the file holds none), so a reader that decodes the TensorProto without knowing about
# external values fails loudly on the length instead of seeing zeros.
STUB = b"graphdef:external-value"
_HEADER = struct.Struct("<8sIIQ16s24x")
_CHUNK = 1 << 20  # the unit of holes in a written weights file, and of checksumming
_MODEL_SUFFIX = re.compile(r"\.(pb|pbtxt|pb\.txt|prototxt|txt|graphdef)$")
_HOW_TO_INLINE = "graphrun convert --inline-weights writes the model with its weights inside"


class ExternalWeightsError(ValueError):
    """A weights file that is missing, of another write, truncated or corrupt; names the node."""


def sidecar_name(model_path):
    """model.pb -> model.weights (the name written into the graph; any name works on reading)."""
    base = os.path.basename(str(model_path))
    return _MODEL_SUFFIX.sub("", base) + SUFFIX


def is_external(node):
    return node.op == "Const" and ATTR in node.attr


def _where(node):
    return f"node '{node.name}' ({node.op})"


def _reference(node):
    """(location, tag, offset, length, crc) of an external Const, checked for form."""
    value = node.attr[ATTR]
    if value.WhichOneof("value") != "list" or len(value.list.s) != 2 or len(value.list.i) != 3:
        raise ExternalWeightsError(f"{_where(node)}: attr {ATTR} must be a list of 2 strings (file, tag) and "
                                   "3 ints (offset, length, crc32c)")
    try:
        location, tag = value.list.s[0].decode("utf-8"), value.list.s[1].decode("ascii")
    except UnicodeDecodeError:
        raise ExternalWeightsError(f"{_where(node)}: attr {ATTR} holds a file name or tag that is not text") from None
    offset, length, crc = value.list.i
    if not re.fullmatch(r"[0-9a-f]{32}", tag):
        raise ExternalWeightsError(f"{_where(node)}: attr {ATTR}: the tag must be 32 hex digits")
    if offset < HEADER_SIZE or offset % ALIGNMENT or length < 0 or not 0 <= crc < (1 << 32):
        raise ExternalWeightsError(f"{_where(node)}: attr {ATTR}: offset {offset} / length {length} / crc "
                                   f"{crc} is not valid (offsets are multiples of {ALIGNMENT} past the header)")
    return location, tag, offset, length, crc


def bind(graph_def, directory):
    """Resolves the weights file names of a GraphDef just read from `directory` to full paths
    (in memory), and stubs each external value (see STUB). Refuses a name with a directory part."""
    for node in graph_def.node:
        if ATTR not in node.attr:
            continue
        if node.op != "Const":
            raise ExternalWeightsError(f"{_where(node)}: only a Const may have attr {ATTR}")
        location = _reference(node)[0]
        if (not location or os.path.basename(location) != location or location in (".", "..")
                or "\\" in location or "\0" in location):
            raise ExternalWeightsError(f"{_where(node)}: the weights file {location!r} must be a plain file name "
                                       "in the model's directory")
        node.attr[ATTR].list.s[0] = os.path.join(os.path.abspath(directory), location).encode("utf-8")
        node.attr["value"].tensor.tensor_content = STUB


# -- reading ------------------------------------------------------------------------------

_mappings = weakref.WeakValueDictionary()


def _mapping(path, where):
    """The read-only mapping of the weights file at `path` (shared while any array uses it) and its tag."""
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
            mapped = _mappings.get(key)
            if mapped is None:
                if info.st_size < HEADER_SIZE:
                    raise ExternalWeightsError(f"{where}: weights file {path} has {info.st_size} bytes, shorter "
                                               f"than its {HEADER_SIZE}-byte header")
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                _mappings[key] = mapped
    except FileNotFoundError:
        raise ExternalWeightsError(f"{where}: its value is stored in {path}, which does not exist; "
                                   f"copy it beside the model, or {_HOW_TO_INLINE}") from None
    except OSError as e:
        raise ExternalWeightsError(f"{where}: cannot read weights file {path}: {e.strerror}") from None
    magic, version, alignment, size, tag = _HEADER.unpack_from(mapped, 0)
    if magic != MAGIC or version != VERSION or alignment != ALIGNMENT:
        raise ExternalWeightsError(f"{where}: {path} is not a graphdef weights file (version {VERSION})")
    if size != len(mapped):
        raise ExternalWeightsError(f"{where}: weights file {path} has {len(mapped)} bytes but was written with "
                                   f"{size} (truncated or appended to)")
    return mapped, tag.hex()


def value_of(node, verify=None):
    """The value of an external Const (bound by `bind`): a read-only ndarray over the mapping."""
    where = _where(node)
    location, tag, offset, length, crc = _reference(node)
    if not os.path.isabs(location):
        raise ExternalWeightsError(f"{where}: its value is stored outside the graph, in {location!r}; read "
                                   f"the model from its file (graphdef.load, tf.load, graphrun) so the weights "
                                   f"file is found, or {_HOW_TO_INLINE}")
    tensor = node.attr["value"].tensor
    try:
        dtype = dtypes.as_dtype(tensor.dtype)
    except TypeError:
        raise ExternalWeightsError(f"{where}: an external value of dtype {tensor.dtype} is not supported") from None
    if dtype.np.hasobject or tensor.tensor_shape.unknown_rank or any(d.size < 0 for d in tensor.tensor_shape.dim):
        raise ExternalWeightsError(f"{where}: an external value needs a numeric dtype and a full shape")
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = 1
    for d in shape:
        count *= d
    if count * dtype.np.itemsize != length:
        raise ExternalWeightsError(f"{where}: its external value has {length} bytes, shape "
                                   f"{show(TensorShape(shape))} of {dtype.name} needs {count * dtype.np.itemsize}")
    mapped, file_tag = _mapping(location, where)
    if file_tag != tag:
        raise ExternalWeightsError(f"{where}: weights file {location} belongs to another write of the model "
                                   "(tags differ); write the model and its weights file again together")
    if offset + length > len(mapped):
        raise ExternalWeightsError(f"{where}: its value at bytes {offset}..{offset + length} lies past the end of "
                                   f"{location} ({len(mapped)} bytes)")
    array = np.frombuffer(mapped, dtype=dtype.np.newbyteorder("<"), count=count, offset=offset).reshape(shape)
    if verify if verify is not None else os.environ.get(VERIFY_ENV) == "1":
        if _crc32c(array) != crc:
            raise ExternalWeightsError(f"{where}: its value in {location} fails its crc32c check (corrupt)")
    if dtype is dtypes.bool_:
        # a bool must be 0 or 1 in memory; bytes from a file are made so by a copy (bools are small)
        array = _read_only(array != 0)
    return array


def _read_only(array):
    array.flags.writeable = False
    return array


def _crc32c(array):
    """crc32c of the array's bytes; a run of zero chunks (most of a sparse table) costs a
    32x32 bit-matrix product each instead of a pass over its bytes."""
    data = memoryview(np.ascontiguousarray(array)).cast("B").toreadonly()
    crc = 0
    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        if len(chunk) == _CHUNK and not _any_nonzero(chunk):
            crc = _times(_ZEROS_MATRIX, crc) ^ _ZEROS_CRC
        else:
            crc = google_crc32c.extend(crc, bytes(chunk))  # it takes bytes only
    return crc


def _any_nonzero(chunk):
    words = len(chunk) // 8
    return bool(np.frombuffer(chunk, np.uint64, words).any() or np.frombuffer(chunk[words * 8:], np.uint8).any())


# crc32c(A + zeros) = Z(crc32c(A)) ^ crc32c(zeros), where Z is the linear map "append that many
# zero bytes" on the reflected CRC register (polynomial 0x82F63B78), as zlib's crc32_combine.
def _times(matrix, vector):
    out, bit = 0, 0
    while vector:
        if vector & 1:
            out ^= matrix[bit]
        vector >>= 1
        bit += 1
    return out


def _zeros_matrix(nbytes):
    operator = [0x82F63B78] + [1 << n for n in range(31)]  # one zero bit
    for _ in range(3):
        operator = [_times(operator, column) for column in operator]  # 2, 4, 8 bits: one zero byte
    result = None
    while nbytes:
        if nbytes & 1:
            result = operator if result is None else [_times(operator, column) for column in result]
        nbytes >>= 1
        if nbytes:
            operator = [_times(operator, column) for column in operator]
    return result


# -- writing ------------------------------------------------------------------------------

def stub_proto(array, proto):
    """`proto` (a TensorProto) with `array`'s dtype and shape and no content."""
    proto.Clear()
    proto.dtype = dtypes.as_dtype(array.dtype).enum
    proto.tensor_shape.SetInParent()
    for d in array.shape:
        proto.tensor_shape.dim.add().size = d
    return proto


def check_threshold(threshold):
    if threshold < MIN_THRESHOLD:
        raise ValueError(f"the external weights threshold must be at least {MIN_THRESHOLD} bytes, got {threshold}")
    return threshold


def _candidates(graph_def, held, threshold):
    """{node name: little-endian contiguous array} of every Const that may go to a weights file:
    the values graph_to_proto held back, values already external (read back, their crc32c checked
    as they are copied) and, with a threshold, tensor_contents of at least that many bytes."""
    found = {}
    for node in graph_def.node:
        if node.op != "Const":
            continue
        if ATTR in node.attr:
            found[node.name] = value_of(node, verify=True)
            del node.attr[ATTR]
        elif node.name in held:
            found[node.name] = held[node.name]
        elif threshold is not None and "value" in node.attr:
            content = node.attr["value"].tensor.tensor_content
            if len(content) >= threshold:
                found[node.name] = np.frombuffer(content, dtype=np.uint8)
                node.attr["value"].tensor.tensor_content = b""
    return {name: np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False))
            for name, a in found.items()}


def plan(graph_def, held, external, threshold, limit):
    """Decides where each large value goes; returns the arrays for the weights file ({} for none).

    `held` are values graph_to_proto kept out of the message (their TensorProtos are stubs);
    `external` is True (every value of at least `threshold` bytes goes out), False (all inside)
    or None (outside only when the message would pass `limit`). Values kept inside are written
    into their TensorProto here. A message over the limit with external=False is a ValueError.
    """
    check_threshold(threshold)
    candidates = _candidates(graph_def, held, threshold if external else None)
    if not external:
        estimate = graph_def.ByteSize() + sum(a.nbytes + 16 for a in candidates.values())
        if estimate > limit and external is False:  # refused before anything is copied
            raise ValueError(too_large_message(estimate, limit))
        if estimate > limit:
            candidates.update(_candidates(graph_def, {}, threshold))
            external = True
    nodes = {node.name: node for node in graph_def.node if node.name in candidates}
    outside = {}
    for name, array in candidates.items():
        tensor = nodes[name].attr["value"].tensor
        if external and array.nbytes >= threshold:
            outside[name] = array
            tensor.tensor_content = b""
        else:
            tensor.tensor_content = array.tobytes()
    return outside


def too_large_message(size, limit):
    return (f"the GraphDef would take {size} bytes, over protobuf's 2 GB limit ({limit} bytes); write its "
            f"weights to a file beside it (external_weights=True, or graphrun convert --external-weights)")


def write(path, graph_def, outside, encode):
    """Writes the weights file (named after `path`) and then the model, both atomically; the
    external Consts of `graph_def` get their `_external_value` attrs here."""
    name = sidecar_name(path)
    layout, end = [], HEADER_SIZE
    for node in graph_def.node:
        array = outside.get(node.name)
        if array is None:
            continue
        offset = -(-end // ALIGNMENT) * ALIGNMENT
        layout.append((node, offset, array, _crc32c(array)))
        end = offset + array.nbytes
    # the tag follows from what the file holds, so writing a model twice gives the same bytes,
    # and a .pb beside the weights of a write with other values is caught without reading them
    tag = hashlib.blake2b(repr([(o, a.nbytes, c) for _, o, a, c in layout]).encode(), digest_size=16).digest()
    for node, offset, array, crc in layout:
        reference = node.attr[ATTR].list
        reference.s.extend([name.encode("utf-8"), tag.hex().encode("ascii")])
        reference.i.extend([offset, array.nbytes, crc])
    header = _HEADER.pack(MAGIC, VERSION, ALIGNMENT, end, tag)

    def write_weights(f):
        f.write(header)
        for _, offset, array, _ in layout:
            f.seek(offset)
            _write_sparse(f, memoryview(array).cast("B"))
        f.truncate(end)

    data = encode(graph_def)
    write_files_atomically([(os.path.join(os.path.dirname(os.path.abspath(path)), name), write_weights),
                            (path, lambda f: f.write(data))])


def _write_sparse(f, data):
    """Writes `data` at the file position, seeking over all-zero chunks so they stay holes."""
    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        if _any_nonzero(chunk):
            f.write(chunk)
        else:
            f.seek(len(chunk), os.SEEK_CUR)


_ZEROS_MATRIX = _zeros_matrix(_CHUNK)
_ZEROS_CRC = google_crc32c.value(bytes(_CHUNK))
