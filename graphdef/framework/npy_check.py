"""Checks an .npy header before numpy reads the data behind it.

numpy.load trusts the header: it allocates the whole array the header describes and then
reads, so a 100-byte file claiming [10**6, 10**6] float64 asks for 7 TiB, and a header
claiming more data than the file holds is only noticed after the allocation. A header
naming Python objects would need unpickling, which graphdef never does. This module
reads the header alone and refuses all three, so np.load only ever runs on a file whose
data is there, numbers, bools or fixed-width strings, and within the tensor size limit.
"""

import re

from numpy.lib import format as npy_format

from graphdef.framework import limits


# numbers, bools, and fixed-width bytes ('S') or unicode ('U') strings for string placeholders
FEEDABLE_KINDS = "biufSU"


class NpyHeaderError(ValueError):
    """The header is unreadable, names objects, or promises more data than there is."""


def read_header(f):
    """(shape, dtype) of the .npy stream `f`, left positioned at the data."""
    try:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(f)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = npy_format.read_array_header_2_0(f)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except NpyHeaderError:
        raise
    except Exception as e:  # noqa: BLE001 - numpy raises several kinds; all mean "not an .npy"
        # ast's messages name objects by address ("<ast.Call object at 0x7f..>"): keep the type only
        reason = re.sub(r"<([\w.]+) object at 0x[0-9a-fA-F]+>", r"\1", " ".join(str(e).split()))
        raise NpyHeaderError(f"not an .npy header ({reason})") from None
    return shape, dtype


def check(f, data_bytes, where):
    """Reads the header of `f` and checks it against the `data_bytes` that follow the start.

    `data_bytes` is the size of the whole stream (file or archive member). Raises
    NpyHeaderError for objects or missing data, ResourceExhaustedError over the limit.
    """
    shape, dtype = read_header(f)
    if dtype.hasobject:
        raise NpyHeaderError(f"{where} holds Python objects ({dtype}); only numbers, bools and strings "
                             "('S' or 'U' arrays) can be fed, and nothing from a file is ever unpickled")
    if dtype.kind not in FEEDABLE_KINDS:
        raise NpyHeaderError(f"{where} holds {dtype} data; only numbers, bools and strings ('S' or 'U' "
                             "arrays) can be fed")
    needed = limits.check(shape, dtype, what="array", where=where)
    available = data_bytes - f.tell()
    if available < needed:
        raise NpyHeaderError(f"{where}: the header promises {limits.describe(shape, dtype.name)} "
                             f"({needed} bytes of data) but only {max(available, 0)} bytes follow it")
    return shape, dtype
