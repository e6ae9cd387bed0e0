"""Random values for placeholders (`--random --seed N`), the same in every runtime.

The generator is spelled out here, not borrowed from numpy, so the C++ runner can produce
the very same values from the same seed with a few lines of integer arithmetic; then
`graphrun compare --random` and `graphrun-cc --random` feed both engines alike.

    stream  = splitmix64(seed XOR fnv1a64(placeholder name as UTF-8))
    word[i] = splitmix64(stream + (i + 1) * 0x9E3779B97F4A7C15)     (mod 2**64, i row-major)

and each element takes its value from its word:

    floats (p significand bits: 11, 24, 53)   m = word >> (64 - p);  value = m * 2**(1 - p) - 1
                                              uniform in [-1, 1), exact in the dtype
    integers (every width, signed or not)     ((word >> 32) * 10) >> 32: uniform in 0..9
    bool                                      word >> 63

A placeholder's values depend only on the seed, its name, its dtype and its shape, not on
which other placeholders a run needs. Integers stay in 0..9 because integer inputs are
usually indices, labels or counts.
"""

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
INT_RANGE = 10  # integers are drawn from 0..INT_RANGE-1


def fnv1a64(text):
    h = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h


def _mix(z):
    """splitmix64's finaliser on a uint64 array (numpy's array arithmetic wraps mod 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _mix_int(value):
    return int(_mix(np.array([value & _MASK], np.uint64))[0])


def words(seed, name, count, first=0):
    """`count` 64-bit words of placeholder `name`'s stream, from word `first` on."""
    stream = _mix_int((seed & _MASK) ^ fnv1a64(name))
    with np.errstate(over="ignore"):
        steps = np.arange(first + 1, first + count + 1, dtype=np.uint64) * np.uint64(GOLDEN)
        return _mix(steps + np.uint64(stream))


def drawable(dtype):
    """Whether the rule above gives values of `dtype` (numpy): floats, integers and bool."""
    return np.dtype(dtype).kind in "fiub"


def random_value(seed, name, dtype, shape):
    """An ndarray of `dtype` (numpy) and `shape` for placeholder `name`, by the rule above."""
    dtype = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    if not drawable(dtype):
        raise TypeError(f"cannot make random values of dtype {dtype}")
    count = int(np.prod(shape, dtype=np.int64))
    values = np.empty(count, dtype)
    # a chunk at a time: the uint64 and float64 temporaries of a whole large feed take several
    # times its size, all page-faulted in; the words are the same, so the values are too
    for first in range(0, count, _CHUNK):
        n = min(_CHUNK, count - first)
        values[first:first + n] = _values(words(seed, name, n, first), dtype)
    return values.reshape(shape)


_CHUNK = 1 << 20  # words made at once


def _values(w, dtype):
    if dtype.kind == "f":
        p = np.finfo(dtype).nmant + 1
        m = (w >> np.uint64(64 - p)).astype(np.float64)
        return (m * 2.0 ** (1 - p) - 1.0).astype(dtype)  # exact: p bits fit both float64 and dtype
    if dtype.kind in "iu":
        return (((w >> np.uint64(32)) * np.uint64(INT_RANGE)) >> np.uint64(32)).astype(dtype)
    return (w >> np.uint64(63)).astype(np.bool_)
