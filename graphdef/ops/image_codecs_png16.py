"""16-bit colour PNGs (RGB, grey with alpha, RGBA at 16 bits a sample), which Pillow reads to 8 bits
and does not write; 16-bit PNGs of any channels are written here too.

The file's IDAT stream is inflated with zlib and each scanline unfiltered here (PNG's five filters:
None and Up over whole rows, Sub as a running sum in each byte lane, Average and Paeth pixel by
pixel). Interlaced ones are refused in one line.
"""

import zlib

import numpy as np

from graphdef.framework.errors import InvalidArgumentError

CHANNELS = {2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel


def is_colour16(data):
    return len(data) > 28 and data[24] == 16 and data[25] in CHANNELS


def _chunks(data):
    i = 8
    while i + 8 <= len(data):
        length = int.from_bytes(data[i:i + 4], "big")
        kind = data[i + 4:i + 8]
        if i + 12 + length > len(data):
            raise ValueError("truncated chunk")
        yield kind, data[i + 8:i + 8 + length]
        i += 12 + length
        if kind == b"IEND":
            return
    raise ValueError("no IEND chunk")


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _unfilter(kind, row, prior, bpp):
    if kind == 0:
        return row
    if kind == 2:
        return (row + prior) & 0xFF
    if kind == 1:
        lanes = row.reshape(-1, bpp).astype(np.int64)
        return (np.cumsum(lanes, axis=0) & 0xFF).reshape(-1)
    out = row.copy()
    previous, above = out.tolist(), prior.tolist()
    for i in range(len(previous)):
        left = previous[i - bpp] if i >= bpp else 0
        if kind == 3:
            previous[i] = (previous[i] + ((left + above[i]) >> 1)) & 0xFF
        elif kind == 4:
            upper_left = above[i - bpp] if i >= bpp else 0
            previous[i] = (previous[i] + _paeth(left, above[i], upper_left)) & 0xFF
        else:
            raise ValueError(f"unknown filter type {kind}")
    return np.array(previous, np.int64)


def decode(data):
    """[height, width, samples] uint16 of a non-interlaced 16-bit colour PNG; ValueError if damaged."""
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    samples = CHANNELS[data[25]]
    if data[28]:
        raise InvalidArgumentError("interlaced 16-bit colour PNGs are not decoded here; decode with dtype=uint8")
    stream = b"".join(body for kind, body in _chunks(data) if kind == b"IDAT")
    bpp, stride = 2 * samples, 2 * samples * width
    try:
        raw = zlib.decompressobj().decompress(stream, height * (stride + 1) + 1)
    except zlib.error as e:
        raise ValueError(f"damaged image data ({e})") from None
    if len(raw) < height * (stride + 1):
        raise ValueError("truncated image data")
    rows = np.frombuffer(raw, np.uint8, height * (stride + 1)).reshape(height, stride + 1).astype(np.int64)
    out = np.empty((height, stride), np.int64)
    prior = np.zeros(stride, np.int64)
    for y in range(height):
        prior = out[y] = _unfilter(int(rows[y, 0]), rows[y, 1:], prior, bpp)
    return out.astype(np.uint8).reshape(height, width * samples, 2).view(">u2")[..., 0].astype(np.uint16).reshape(
        height, width, samples)


def _chunk(kind, body):
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def encode(image, level):
    """A 16-bit PNG of [height, width, 1-4] uint16 (Pillow writes 16-bit grey alone): each row with
    filter None, big-endian samples, deflated at `level`."""
    height, width, samples = image.shape
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[samples]
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes((16, colour, 0, 0, 0))
    rows = np.zeros((height, 1 + width * samples * 2), np.uint8)
    rows[:, 1:] = image.astype(">u2").reshape(height, -1).view(np.uint8)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), level)) + _chunk(b"IEND", b""))
