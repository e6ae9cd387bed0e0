"""The sorted string table TensorFlow's checkpoint index is written in (leveldb's table format).

A table is data blocks of sorted key/value entries, an index block mapping the last key of
each data block to its place, an empty metaindex block, and a 48-byte footer:

    block    entries, each varint32 shared-prefix length, varint32 unshared length,
             varint32 value length, the unshared key bytes, the value; then the uint32
             offsets of the "restart" entries (whose shared length is 0) and their count
    trailer  after each block: 1 byte compression (0, none) and the masked crc32c of the
             block and that byte
    footer   the metaindex and index BlockHandles (varint64 offset, varint64 size), zero
             padded to 40 bytes, then the magic number 0xdb4775248b80fb57, little-endian

Every offset, length and checksum read from a file is checked before use, so a damaged or
hostile index gives one TableError line, never a crash or an unbounded allocation.
"""

import struct

import google_crc32c

MAGIC = 0xdb4775248b80fb57
FOOTER_SIZE = 48
BLOCK_SIZE = 256 << 10          # data block size TensorFlow's bundle writer uses
RESTART_INTERVAL = 16           # leveldb's default for data blocks
_MASK_DELTA = 0xa282ead8
_NO_COMPRESSION = 0


class TableError(ValueError):
    """The file is not a readable sorted string table; the message says where it is broken."""


def masked_crc32c(data):
    """leveldb's masked checksum: CRCs of data that itself holds CRCs stay informative."""
    crc = google_crc32c.value(bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


# -- writing ----------------------------------------------------------------------------------

def _varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _block(entries, restart_interval):
    """One block's bytes from [(key, value)] in key order."""
    out, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % restart_interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(previous), len(key))
            while shared < limit and previous[shared] == key[shared]:
                shared += 1
        out += _varint(shared) + _varint(len(key) - shared) + _varint(len(value)) + key[shared:] + value
        previous = key
    if not restarts:
        restarts.append(0)
    out += b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
    return bytes(out)


def _handle(offset, size):
    return _varint(offset) + _varint(size)


def build(items):
    """The table's bytes for {key bytes: value bytes}, written in key order."""
    out = bytearray()

    def emit(block):
        offset = len(out)
        trailer_type = bytes([_NO_COMPRESSION])
        out.extend(block + trailer_type + struct.pack("<I", masked_crc32c(block + trailer_type)))
        return _handle(offset, len(block))

    index, pending, pending_size = [], [], 0
    for key in sorted(items):
        pending.append((key, items[key]))
        pending_size += len(key) + len(items[key])
        if pending_size >= BLOCK_SIZE:
            index.append((pending[-1][0], emit(_block(pending, RESTART_INTERVAL))))
            pending, pending_size = [], 0
    if pending:
        index.append((pending[-1][0], emit(_block(pending, RESTART_INTERVAL))))
    metaindex = emit(_block([], 1))
    index_handle = emit(_block(index, 1))
    footer = (metaindex + index_handle).ljust(40, b"\0") + struct.pack("<Q", MAGIC)
    return bytes(out) + footer


# -- reading ----------------------------------------------------------------------------------

_UINT64_MASK = (1 << 64) - 1


def key_text(key):
    """A key for a message: its UTF-8 as text, each byte that is not part of a UTF-8 sequence as
    \\xNN, as graphrun-cc's error lines show them (runner/cli/text_escape.cc)."""
    out, i = [], 0
    while i < len(key):
        c = key[i]
        size = 1 if c < 0x80 else 0 if c >= 0xF5 else 4 if c >= 0xF0 else 3 if c >= 0xE0 else 2 if c >= 0xC2 else 0
        try:
            if size == 0:
                raise UnicodeDecodeError("utf-8", key, i, i + 1, "not a lead byte")
            out.append(key[i:i + size].decode("utf-8"))
            i += size
        except UnicodeDecodeError:
            out.append(f"\\x{c:02x}")
            i += 1
    return "".join(out)


def _read_varint(data, pos, where, limit_bits=64):
    value, shift = 0, 0
    while True:
        if pos >= len(data):
            raise TableError(f"{where}: truncated number")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & _UINT64_MASK, pos  # bits past 64 are dropped, as graphrun-cc's uint64 drops them
        shift += 7
        if shift >= limit_bits:
            raise TableError(f"{where}: malformed number")


def _read_handle(data, pos, where):
    offset, pos = _read_varint(data, pos, where)
    size, pos = _read_varint(data, pos, where)
    return (offset, size), pos


def _read_block(data, handle, where):
    offset, size = handle
    if offset + size + 5 > len(data) - FOOTER_SIZE:  # every block and its trailer precede the footer
        raise TableError(f"{where}: block at {offset} of {size} bytes runs past the end of the file")
    block, kind = data[offset:offset + size], data[offset + size]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if masked_crc32c(data[offset:offset + size + 1]) != stored:
        raise TableError(f"{where}: block at {offset} fails its checksum")
    if kind != _NO_COMPRESSION:
        raise TableError(f"{where}: block at {offset} is compressed (type {kind}); only uncompressed "
                         "tables are read (TensorFlow writes its checkpoints uncompressed)")
    return block


def _entries(block, where):
    """[(key, value)] of one block, keys rebuilt from their shared prefixes."""
    if len(block) < 4:
        raise TableError(f"{where}: block too short")
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 - 4 * restarts
    if restarts == 0 and len(block) == 4:
        return []
    if restarts < 1 or end < 0:
        raise TableError(f"{where}: bad restart count {restarts}")
    out, pos, key = [], 0, b""
    while pos < end:
        shared, pos = _read_varint(block, pos, where, 32)
        unshared, pos = _read_varint(block, pos, where, 32)
        length, pos = _read_varint(block, pos, where, 32)
        if shared > len(key) or pos + unshared + length > end:
            raise TableError(f"{where}: entry at {pos} runs past its block")
        key = key[:shared] + bytes(block[pos:pos + unshared])
        pos += unshared
        out.append((key, bytes(block[pos:pos + length])))
        pos += length
    return out


def parse(data, name="table"):
    """{key: value} of a whole table given as bytes; TableError names what is wrong."""
    data = memoryview(data)
    if len(data) < FOOTER_SIZE:
        raise TableError(f"{name}: {len(data)} bytes is too short for a table footer")
    footer = data[len(data) - FOOTER_SIZE:]
    (magic,) = struct.unpack_from("<Q", footer, 40)
    if magic != MAGIC:
        raise TableError(f"{name}: not a sorted string table (bad magic number)")
    handles = footer[:40]  # the handles' varints never run into the magic number
    _, pos = _read_handle(handles, 0, f"{name} footer")
    index_handle, _ = _read_handle(handles, pos, f"{name} footer")
    items = {}
    for last_key, handle_bytes in _entries(_read_block(data, index_handle, f"{name} index"), f"{name} index"):
        handle, _ = _read_handle(handle_bytes, 0, f"{name} index")
        for key, value in _entries(_read_block(data, handle, f"{name} data"), f"{name} data"):
            if key > last_key:
                raise TableError(f"{name}: key '{key_text(key)}' is out of order")
            items[key] = value
    return items
