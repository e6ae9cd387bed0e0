"""ModelInferRequest's tensor bytes without copies: the raw_input_contents are read in place.

Protobuf's parser copies each bytes field, and a request's images are most of its bytes: parsing
the whole message copies them once into the message and once more into each bytes object read
from it. Here the message's top-level fields are walked over instead; each raw_input_contents
entry becomes a memoryview of the received bytes (the arrays the model is fed are made on it),
and only the rest, a few hundred bytes, goes to protobuf's parser. Anything that is not plain
wire format at the top level (a group, a bad varint, a length past the end, field 7 not
length-delimited) is left to protobuf's parser whole, so errors read as they always did.
"""

RAW_INPUT_CONTENTS = 7  # ModelInferRequest's field number
_LENGTH_DELIMITED, _VARINT, _FIXED64, _FIXED32 = 2, 0, 1, 5


def _varint(data, pos, end):
    """(value, position after it), or (None, end) for a varint that is cut off or longer than 10 bytes."""
    value = shift = 0
    for at in range(pos, min(end, pos + 10)):
        byte = data[at]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at + 1
        shift += 7
    return None, end


def split_raw_contents(data):
    """(the message's bytes without raw_input_contents, [memoryview of each entry in order]); None when
    the message has no such entries or its top level is not plain wire format."""
    view = memoryview(data)
    kept, raw = [], []
    pos = start = 0
    end = len(data)
    while pos < end:
        field_at = pos
        key, pos = _varint(data, pos, end)
        if key is None or key >> 3 == 0:
            return None
        wire = key & 7
        if wire == _VARINT:
            value, pos = _varint(data, pos, end)
            if value is None:
                return None
        elif wire == _FIXED64:
            pos += 8
        elif wire == _FIXED32:
            pos += 4
        elif wire == _LENGTH_DELIMITED:
            length, pos = _varint(data, pos, end)
            if length is None or pos + length > end:
                return None
            if key >> 3 == RAW_INPUT_CONTENTS:
                kept.append(view[start:field_at])
                raw.append(view[pos:pos + length])
                start = pos + length
            pos += length
        else:
            return None  # groups (deprecated) and invalid wire types: protobuf's parser decides
        if pos > end:
            return None
        if key >> 3 == RAW_INPUT_CONTENTS and wire != _LENGTH_DELIMITED:
            return None
    if not raw:
        return None
    kept.append(view[start:end])
    return b"".join(kept), raw
