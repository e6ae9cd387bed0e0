"""The numerics policy: which results are exactly specified, and how far the others may stray.

Two runtimes (numpy, graphrun-cc, TensorFlow) on two CPUs can only promise equal bits where
the arithmetic itself is specified to the bit: integer ops, data movement, comparisons, and
IEEE 754's correctly rounded + - * / sqrt applied in a fixed order. Everything else has
freedom that real implementations use:

- a transcendental function (exp, log, tanh, erfc, pow) comes from a library routine that is
  accurate to a few ulps, and numpy picks another routine on another CPU (SIMD paths);
- a reduction, matmul or convolution adds in an order of the kernel's choosing (pairwise,
  blocked, vectorised, threaded), and the error of a sum scales with its terms, which is
  bounded by the size of the whole result rather than by each element.

Each op declares one `Numerics` with its definition; a result's tolerance is the sum over the
ops that made it, for the dtype it has. Integers and bools are always exact. NaN matches any
NaN (payload and sign bits are not specified either), and -0.0 is not +0.0 where exact, except
for max and min: IEEE 754 lets them return either zero when comparing -0.0 with +0.0, and
numpy's SIMD paths, Eigen and the C++ runner do differ there.
"""

from dataclasses import dataclass

import numpy as np

# unit roundoff of each floating dtype's significand (the gap above 1.0)
_EPS = {np.dtype(np.float16): 2.0 ** -10, np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float64): 2.0 ** -52}


def _eps(dtype):
    dtype = np.dtype(dtype)
    if dtype in _EPS:
        return _EPS[dtype]
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return 2.0 ** -7  # bfloat16's 8-bit significand
    return 0.0


def working_dtype(dtype):
    """The dtype a float kernel computes in: float32 for float16 (TF's CPU kernels accumulate half
    in float and round once at the end), else `dtype` itself."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def in_working_dtype(x):
    """`x` as an array of working_dtype (itself when it already is one)."""
    x = np.asarray(x)
    return x.astype(working_dtype(x.dtype), copy=False)


@dataclass(frozen=True)
class Numerics:
    """How exactly an op's result is specified.

    ulps: how many units in the last place two correct implementations may differ by (0: exact).
    per_tensor: the ulps are of the tensor's largest magnitude (sums, products of matrices,
    anything whose rounding error grows with its terms) rather than of each element.
    """

    ulps: int = 0
    per_tensor: bool = False
    zero_sign: bool = True     # False: -0.0 and +0.0 may be swapped (max and min)

    @property
    def exact(self):
        return self.ulps == 0

    def __add__(self, other):
        return Numerics(self.ulps + other.ulps, self.per_tensor or other.per_tensor,
                        self.zero_sign and other.zero_sign)

    def tolerance(self, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc" and dtype.name != "bfloat16":
            return Tolerance()
        if self.exact:
            return Tolerance(zero_sign=self.zero_sign)
        eps = _eps(dtype)
        return Tolerance(rtol=self.ulps * eps, per_tensor=self.per_tensor,
                         atol=self.ulps * float(np.finfo(dtype).tiny))


EXACT = Numerics()
EXACT_BUT_ZERO_SIGN = Numerics(zero_sign=False)  # max, min and what picks with them (Relu, MaxPool)


def elementwise_ulps(ulps):
    """Each element from a library routine accurate to a few ulps of itself (exp, log, tanh, pow)."""
    return Numerics(ulps)


def tensor_ulps(ulps):
    """Sums in a kernel's own order: ulps of the tensor's largest magnitude (reductions, matmul, conv)."""
    return Numerics(ulps, per_tensor=True)


def combined(numerics):
    """The policy of a chain of ops: their ulps add up (well-conditioned chains; see README)."""
    total = EXACT
    for n in numerics:
        total = total + n
    return total


@dataclass(frozen=True)
class Tolerance:
    """How `actual` may differ from `expected` for one tensor."""

    rtol: float = 0.0
    atol: float = 0.0
    per_tensor: bool = False
    zero_sign: bool = True

    @property
    def exact(self):
        return self.rtol == 0 and self.atol == 0

    def describe(self):
        if self.exact:
            return "bit for bit" + ("" if self.zero_sign else " but the sign of zero")
        return f"rtol={self.rtol:.3g}{' of the largest magnitude' if self.per_tensor else ''}, atol={self.atol:.3g}"

    def mismatch(self, actual, expected):
        """None when `actual` conforms to `expected`, else a one-line reason naming where."""
        actual, expected = np.asarray(actual), np.asarray(expected)
        if actual.dtype != expected.dtype:
            return f"dtype {actual.dtype}, expected {expected.dtype}"
        if actual.shape != expected.shape:
            return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
        if expected.dtype.kind not in "fc":
            bad = actual != expected
        else:
            bad = self._bad_floats(actual, expected)
        if not np.any(bad):
            return None
        where = np.argwhere(bad)[:4] if actual.ndim else [()]
        shown = ", ".join(f"at {list(map(int, i))}: got {actual[tuple(i)]!r}, expected {expected[tuple(i)]!r}"
                          for i in where)
        return f"{int(np.sum(bad))} of {expected.size} values differ ({self.describe()}): {shown}"

    def _bad_floats(self, actual, expected):
        nan_a, nan_e = np.isnan(actual), np.isnan(expected)
        if self.exact:
            bits = f"u{expected.dtype.itemsize}"
            differ = actual.view(bits) != expected.view(bits)
            if not self.zero_sign:
                differ &= ~((actual == 0) & (expected == 0))
            return (nan_a != nan_e) | (~nan_e & differ)
        finite = np.isfinite(expected)
        scale = np.abs(expected)
        if self.per_tensor and np.any(finite):
            scale = np.maximum(scale, np.max(np.abs(expected[finite])))
        with np.errstate(all="ignore"):
            close = np.abs(actual.astype(np.float64) - expected) <= self.atol + self.rtol * scale
        # inf and nan must sit in the same places with the same signs
        same_special = np.where(finite, True, (nan_a & nan_e) | (actual == expected))
        return (nan_a != nan_e) | ~np.where(finite, close & np.isfinite(actual), same_special)


def canonical(array):
    """`array` with every NaN made the one quiet NaN, so files of expected values are byte-stable."""
    array = np.asarray(array)
    if array.dtype.kind != "f" or not np.any(np.isnan(array)):
        return array
    return np.where(np.isnan(array), np.array(np.nan, array.dtype), array)
