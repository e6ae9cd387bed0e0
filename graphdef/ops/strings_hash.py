"""StringToHashBucketFast and Fingerprint: FarmHash's Fingerprint64, as TensorFlow computes them.

Fingerprint64 is FarmHash's "na" 64-bit hash, a fixed function of the bytes that TensorFlow
promises never to change (it keys saved vocabularies). It is written here from the algorithm
with Python ints masked to 64 bits; the tests compare it with TensorFlow's on random strings of
every length class (0, 1-3, 4-7, 8-16, 17-32, 33-64 and longer).
"""

import struct

import numpy as np

from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.strings import as_array
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define

MASK = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _fetch32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rotate(v, shift):
    return ((v >> shift) | (v << (64 - shift))) & MASK if shift else v


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _len_0_to_16(s):
    n = len(s)
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(s, 0) + K2) & MASK
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        a = _fetch32(s, 0)
        return _hash_len16((n + (a << 3)) & MASK, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) & MASK) ^ ((z * K0) & MASK)) * K2) & MASK
    return K2


def _len_17_to_32(s):
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K1) & MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK
    d = (_fetch64(s, n - 16) * K2) & MASK
    return _hash_len16((_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
                       (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)


def _len_33_to_64(s):
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K2) & MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK
    d = (_fetch64(s, n - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash_len16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(s, 16) * mul) & MASK
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & MASK
    h = ((z + _fetch64(s, n - 24)) * mul) & MASK
    return _hash_len16((_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
                       (e + _rotate((f + a) & MASK, 18) + g) & MASK, mul)


def _weak_hash_32(s, i, a, b):
    """FarmHash's WeakHashLen32WithSeeds on the 32 bytes at s[i:], seeds a and b: a pair."""
    w, x, y, z = struct.unpack_from("<4Q", s, i)
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def fingerprint64(s):
    """FarmHash Fingerprint64 of the bytes `s`, an int in [0, 2^64)."""
    n = len(s)
    if n <= 16:
        return _len_0_to_16(s)
    if n <= 32:
        return _len_17_to_32(s)
    if n <= 64:
        return _len_33_to_64(s)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(s, 0)) & MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & MASK, 37) * K1) & MASK
        y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & MASK, 42) * K1) & MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & MASK
        z = (_rotate((z + w[0]) & MASK, 33) * K1) & MASK
        v = _weak_hash_32(s, i, (v[1] * K1) & MASK, (x + w[0]) & MASK)
        w = _weak_hash_32(s, i + 32, (z + w[1]) & MASK, (y + _fetch64(s, i + 16)) & MASK)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w[0] + ((n - 1) & 63)) & MASK
    v0 = (v[0] + w0) & MASK
    w0 = (w0 + v0) & MASK
    v, w = (v0, v[1]), (w0, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & MASK, 42) * mul) & MASK
    x ^= (w[1] * 9) & MASK
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * mul) & MASK
    v = _weak_hash_32(s, i, (v[1] * mul) & MASK, (x + w[0]) & MASK)
    w = _weak_hash_32(s, i + 32, (z + w[1]) & MASK, (y + _fetch64(s, i + 16)) & MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & MASK, mul)


def _hash_bucket_fast(input, *, num_buckets):  # noqa: A002 - TF's argument name
    x = as_array(input)
    buckets = [fingerprint64(s) % num_buckets for s in x.reshape(-1).tolist()]
    return np.array(buckets, dtype=np.int64).reshape(x.shape)


def _infer_buckets(ctx):
    n = ctx.attrs["num_buckets"]
    if n < 1:  # graphrun-cc's words for a count under its minimum
        raise ctx.error(f"attr 'num_buckets' is {n}; {ctx.op_type} needs at least 1")
    return [ctx.shape(0)]


STRING_TO_HASH_BUCKET_FAST = define(
    "StringToHashBucketFast", "input: string -> output: int64",
    doc="FarmHash Fingerprint64 of each string modulo num_buckets, as TensorFlow hashes vocabulary buckets.",
    attrs={"num_buckets": Attr("int", minimum=1)}, infer=_infer_buckets, kernel=_hash_bucket_fast,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def legacy_hash64(s, seed=0xDECAFCAFFE):
    """TensorFlow's own Hash64 (a MurmurHash2 64-bit variant), which the legacy StringToHashBucket uses."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(s)
    h = (seed ^ (n * m)) & MASK
    whole = n // 8 * 8
    for k in struct.unpack_from(f"<{whole // 8}Q", s):
        k = (k * m) & MASK
        k ^= k >> r
        k = (k * m) & MASK
        h = ((h ^ k) * m) & MASK
    if n > whole:
        h = ((h ^ int.from_bytes(s[whole:], "little")) * m) & MASK
    h ^= h >> r
    h = (h * m) & MASK
    return h ^ (h >> r)


def _hash_bucket_legacy(string_tensor, *, num_buckets):
    x = as_array(string_tensor)
    buckets = [legacy_hash64(s) % num_buckets for s in x.reshape(-1).tolist()]
    return np.array(buckets, dtype=np.int64).reshape(x.shape)


STRING_TO_HASH_BUCKET = define(
    "StringToHashBucket", "string_tensor: string -> output: int64",
    doc="TensorFlow's legacy Hash64 of each string modulo num_buckets (StringToHashBucketFast replaced it).",
    attrs={"num_buckets": Attr("int", minimum=1)}, infer=_infer_buckets, kernel=_hash_bucket_legacy,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _rotl(v, shift):
    return ((v << shift) | (v >> (64 - shift))) & MASK


def siphash24(key0, key1, s):
    """SipHash-2-4 of the bytes `s` under the 128-bit key (key0, key1): TF's StrongKeyedHash."""
    v0, v1 = key0 ^ 0x736F6D6570736575, key1 ^ 0x646F72616E646F6D
    v2, v3 = key0 ^ 0x6C7967656E657261, key1 ^ 0x7465646279746573

    def rounds(n, v0, v1, v2, v3):
        for _ in range(n):
            v0 = (v0 + v1) & MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    whole = len(s) // 8 * 8
    for m in struct.unpack_from(f"<{whole // 8}Q", s):
        v3 ^= m
        v0, v1, v2, v3 = rounds(2, v0, v1, v2, v3)
        v0 ^= m
    last = ((len(s) & 0xFF) << 56) | int.from_bytes(s[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(2, v0, v1, v2, v3)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(4, v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def _infer_strong(ctx):
    if len(ctx.attrs["key"]) != 2:
        raise ctx.error(f"attr 'key' must hold 2 ints, the 128-bit key, got {len(ctx.attrs['key'])}")
    return _infer_buckets(ctx)


def _hash_bucket_strong(input, *, num_buckets, key):  # noqa: A002 - TF's argument name
    x = as_array(input)
    k0, k1 = (int(k) & MASK for k in key)
    buckets = [siphash24(k0, k1, s) % num_buckets for s in x.reshape(-1).tolist()]
    return np.array(buckets, dtype=np.int64).reshape(x.shape)


STRING_TO_HASH_BUCKET_STRONG = define(
    "StringToHashBucketStrong", "input: string -> output: int64",
    doc="SipHash-2-4 of each string under the 128-bit key, modulo num_buckets (Keras Hashing with a salt).",
    attrs={"num_buckets": Attr("int", minimum=1), "key": Attr("list(int)")}, infer=_infer_strong,
    kernel=_hash_bucket_strong, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    return build("StringToHashBucketStrong", [input], name=name, default_name="StringToHashBucketStrong",
                 attrs={"num_buckets": num_buckets, "key": list(key)}).outputs[0]


def _infer_fingerprint(ctx):
    data = ctx.shape(0)
    if data.ndims == 0:
        raise ctx.error("data must have rank at least one")
    return [TensorShape([None if data.ndims is None else data.dims[0], 8])]


def _row_fingerprints(rows):
    return np.frombuffer(b"".join(fingerprint64(r).to_bytes(8, "little") for r in rows), np.uint8).reshape(-1, 8)


def _fingerprint(data, method):
    method = as_array(method)
    if method.ndim or method[()] != b"farmhash64":
        shown = method[()].decode("utf-8", "backslashreplace") if method.ndim == 0 else f"a {method.ndim}-D tensor"
        raise InvalidArgumentError(f"Unsupported fingerprint method: {shown}")
    x = as_array(data)
    if x.ndim == 0:
        raise InvalidArgumentError("`data` should have at least one dimension")
    n = x.shape[0]
    width = int(np.prod(x.shape[1:], dtype=np.int64))
    if x.dtype.kind == "O":  # each string fingerprinted; a row of several, the fingerprint of theirs
        flat = x.reshape(n, width)
        if width == 1 or n == 0:
            return _row_fingerprints(flat.reshape(-1).tolist()).reshape(n, 8)
        each = _row_fingerprints(flat.reshape(-1).tolist()).reshape(n, -1)
        return _row_fingerprints([row.tobytes() for row in each]).reshape(n, 8)
    rows = np.ascontiguousarray(x.astype(x.dtype.newbyteorder("<"), copy=False)).reshape(n, width).view(np.uint8)
    return _row_fingerprints([row.tobytes() for row in rows]).reshape(n, 8)


FINGERPRINT = define(
    "Fingerprint", "data: T, method: string -> fingerprint: uint8",
    doc="FarmHash Fingerprint64 of each row of data (its bytes; of strings, their fingerprints), 8 bytes each.",
    attrs={"T": Attr("type")}, infer=_infer_fingerprint, kernel=_fingerprint, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)


def fingerprint(data, method="farmhash64", name=None):
    return build("Fingerprint", [data, method], name=name, default_name="Fingerprint").outputs[0]


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    return build("StringToHashBucketFast", [input], name=name, default_name="StringToHashBucketFast",
                 attrs={"num_buckets": num_buckets}).outputs[0]

