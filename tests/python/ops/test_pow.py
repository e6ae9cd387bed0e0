"""Pow's fast path: x ** 2 and x ** 3 as x*x and (x*x)*x for a float32/float64 x and a one-element
exponent of its dtype. Judged against float64 references (exact rational arithmetic for float64
x) under Pow's declared numerics, with the signs of zeros and infinities and the places of NaN
exact, over the special values and the edges where squares and cubes overflow or underflow;
against TensorFlow; and every other exponent, shape and dtype still numpy's pow bit for bit."""

import math
from fractions import Fraction

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import REGISTRY
from tests.support.numerics_policy import assert_same
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - a fixture

POW = REGISTRY["Pow"]


def _around(v, dtype, n=3):
    """v and its n float neighbours either side, in dtype."""
    v = dtype(v)
    out, up, down = [v], v, v
    with np.errstate(over="ignore"):  # above FLT_MAX is inf
        for _ in range(n):
            up, down = np.nextafter(up, dtype(np.inf)), np.nextafter(down, dtype(0))
            out += [up, down]
    return out


def _specials(dtype):
    info = np.finfo(dtype)
    edges = [info.max, info.tiny, info.smallest_subnormal, info.tiny - info.smallest_subnormal,
             np.sqrt(info.max), np.cbrt(info.max), np.sqrt(info.tiny), np.cbrt(info.tiny),
             np.sqrt(info.smallest_subnormal), np.cbrt(info.smallest_subnormal)]
    values = [0.0, 1.0, 2.0, 3.5, 1e-20, np.inf, np.nan]
    for v in edges:
        values += _around(v, dtype)
    if dtype == np.float32:
        values += _around(6.9814636e12, dtype)  # the one float32 whose (x*x)*x overflows but cube does not
    rng = np.random.default_rng(0)
    values += list(rng.normal(size=200) * 10.0 ** rng.integers(-12, 12, size=200))
    with np.errstate(over="ignore"):
        x = np.array(values, dtype)
    return np.concatenate([x, -x])


def _exact_power(v, e):
    """The correctly rounded float64 of v ** e (Python's int division rounds correctly)."""
    if not math.isfinite(v):
        return v ** e if not math.isnan(v) else v
    negative = v < 0 or (v == 0 and math.copysign(1.0, v) < 0)
    sign = -1.0 if negative and e % 2 else 1.0
    exact = Fraction(abs(v)) ** e
    try:
        return math.copysign(float(exact), sign)
    except OverflowError:
        return math.copysign(math.inf, sign)


def _reference(x, e):
    if x.dtype == np.float64:
        return np.array([_exact_power(float(v), e) for v in x], np.float64)
    with np.errstate(all="ignore"):  # float64 squares and cubes of float32s, rounded once to float32
        return np.power(x.astype(np.float64), e).astype(np.float32)


def _assert_pow_conforms(got, x, e):
    expected = _reference(x, e)
    why = POW.numerics.tolerance(x.dtype).mismatch(got, expected)
    assert why is None, why
    exact = (expected == 0) | np.isinf(expected)  # signs of zeros and infinities are exact
    assert np.array_equal(np.signbit(got[exact]), np.signbit(expected[exact]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [2, 3])
def test_square_and_cube_conform_over_the_special_values(dtype, e):
    x = _specials(dtype)
    with np.errstate(all="ignore"):
        got = POW.kernel(x, np.array(e, dtype))
        # the rule graphrun-cc shares: x*x, and (x*x)*x, bit for bit, but where that alone overflows
        plain = x * x if e == 2 else (x * x) * x
    _assert_pow_conforms(got, x, e)
    alone = np.isinf(plain) & ~np.isinf(_reference(x, e))
    assert_same(got[~alone], plain[~alone])
    assert (dtype == np.float32 and e == 3) == bool(np.any(alone))
    if np.any(alone):
        assert set(np.abs(x[alone]).tolist()) == {float(np.float32(6.9814636e12))}
        assert np.all(np.abs(got[alone]) == np.finfo(np.float32).max)


def test_signs_of_zeros_and_infinities_are_pows():
    x = np.array([0.0, -0.0, np.inf, -np.inf, -1e-30, -1e-45, np.nan], np.float32)
    with np.errstate(all="ignore"):
        for e in (2, 3):
            assert_same(POW.kernel(x, np.float32(e)), np.power(x, np.float32(e)))


@pytest.mark.parametrize("x_shape, y_shape", [((2, 3), ()), ((2, 3), (1,)), ((2, 3), (1, 1, 1)), ((), (1,)),
                                             ((), ()), ((4, 0), (1,)), ((1, 5), (1, 1))])
def test_one_element_exponents_of_any_rank_broadcast_as_pow(x_shape, y_shape):
    x = np.random.default_rng(1).normal(size=x_shape).astype(np.float32)
    for e in (2, 3):
        y = np.full(y_shape, e, np.float32)
        got = POW.kernel(x, y)
        assert np.shape(got) == np.broadcast_shapes(x_shape, y_shape)
        assert_same(got, np.broadcast_to(x * x if e == 2 else (x * x) * x, np.shape(got)))
    # a numpy scalar base (a 0-d result) takes the same rule
    assert_same(POW.kernel(np.float32(-1.5), np.float32(3)), np.float32(-1.5) * np.float32(-1.5) * np.float32(-1.5))


@pytest.mark.parametrize("x, y", [
    (np.array([-0.0, -np.inf, 4.0, 2.0], np.float32), np.float32(0.5)),        # not sqrt: pow(-0, .5) is +0
    (np.array([-0.0, -2.0, 3.0], np.float32), np.float32(-2.0)),
    (np.array([1.5, -2.0], np.float32), np.array([2.0, 3.0], np.float32)),     # two exponents
    (np.array([1.5, -2.0], np.float32), np.float32(2.5)),
    (np.array([1.5, -2.0, 1e4], np.float16), np.float16(3.0)),                 # float16 stays numpy's
    (np.array([3, -2, 7], np.int32), np.int32(3)),
    (np.array([1.1, -2.0], np.float64), np.float64(4.0)),
])
def test_every_other_pow_is_numpys(x, y):
    with np.errstate(all="ignore"):
        assert_same(POW.kernel(x, y), np.power(x, y))


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_and_cube_in_a_session_match_tensorflow(tf_oracle, dtype):
    """The exponent reaches the kernel as a Const's numpy scalar, as in Keras' tanh GELU.

    Not +-6.9814636e12 in float32: TensorFlow has two answers there. Its Pow kernel gives
    +-FLT_MAX, the cube correctly rounded (and ours, checked against the exact cube above), but
    grappler's arithmetic optimizer rewrites some graphs' pow(x, 3) into products, which give
    +-inf (this graph's, with its pow(x, 2) beside it)."""
    d = tf.as_dtype(dtype)
    x = _specials(dtype)
    x = x[np.abs(x) != np.float32(6.9814636e12)] if dtype == np.float32 else x

    def make():
        p = tf.placeholder(d, [None], name="x")
        return [tf.pow(p, tf.constant(dtype(3))), tf.pow(p, tf.constant(dtype(2))),
                p ** tf.constant(dtype(3), shape=[1])]
    cube, square, cube_1 = run_both(tf_oracle, make, {"x": x})
    with np.errstate(all="ignore"):
        assert_same(square, x * x)
    for got in (cube, cube_1):
        _assert_pow_conforms(got, x, 3)
