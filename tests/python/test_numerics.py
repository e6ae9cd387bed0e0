"""The numerics policy itself: every op declares one, tolerances add up along a path, and the
comparison treats NaN, zeros and infinities as the policy says."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, Numerics, Tolerance, canonical, combined
from graphdef.ops.registry import REGISTRY, numerics_of

EPS32 = 2.0 ** -23


def test_every_op_declares_its_numerics():
    undeclared = sorted(name for name, op in REGISTRY.items() if not isinstance(op.numerics, Numerics))
    assert not undeclared


def test_integer_results_are_exact_whatever_the_op():
    assert REGISTRY["MatMul"].numerics.tolerance(np.int32).exact
    assert REGISTRY["Exp"].numerics.tolerance(np.bool_).exact


@pytest.mark.parametrize("op, exact", [("AddV2", True), ("RealDiv", True), ("Sqrt", True), ("Cast", True),
                                       ("Exp", False), ("Tanh", False), ("Sum", False), ("MatMul", False),
                                       ("Conv2D", False)])
def test_ieee_ops_are_exact_and_library_routines_and_sums_are_not(op, exact):
    assert REGISTRY[op].numerics.exact is exact


def test_a_tolerance_is_ulps_of_the_dtype():
    t = REGISTRY["Exp"].numerics.tolerance(np.float32)
    assert t.rtol == 4 * EPS32 and not t.per_tensor
    assert REGISTRY["Exp"].numerics.tolerance(np.float64).rtol == 4 * 2.0 ** -52


def test_a_path_adds_the_ulps_of_its_ops():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        w = tf.constant(np.ones((3, 1), np.float32))
        tf.sigmoid(tf.matmul(x, w) + 1.0, name="y")
        tf.nn.relu(x, name="r")
    graph_def = g.as_graph_def()
    y = numerics_of(graph_def, "y:0")
    assert (y.ulps, y.per_tensor) == (8 + 4, True)        # MatMul, then Sigmoid; the add is exact
    relu = numerics_of(graph_def, "r")
    assert relu.exact and not relu.zero_sign


def test_exact_means_bits_but_any_nan():
    t = Tolerance()
    quiet, negative_nan = np.float32(np.nan), -np.float32(np.nan)
    assert t.mismatch(np.array([1.0, negative_nan], np.float32), np.array([1.0, quiet], np.float32)) is None
    assert "1 of 1" in t.mismatch(np.array([-0.0], np.float32), np.array([0.0], np.float32))
    assert t.mismatch(np.nextafter(np.float32(1), np.float32(2)).reshape(1), np.ones(1, np.float32))


def test_max_and_min_may_swap_the_sign_of_zero_only():
    t = EXACT_BUT_ZERO_SIGN.tolerance(np.float32)
    assert t.mismatch(np.array([-0.0, 2.0], np.float32), np.array([0.0, 2.0], np.float32)) is None
    assert t.mismatch(np.array([-0.0], np.float32), np.array([1e-45], np.float32))


def test_elementwise_ulps_are_relative_to_each_element():
    t = Numerics(4).tolerance(np.float32)
    expected = np.array([1.0, 1e-30], np.float32)
    assert t.mismatch(expected * np.float32(1 + 3 * EPS32), expected) is None
    assert t.mismatch(expected * np.float32(1 + 8 * EPS32), expected)
    assert t.mismatch(np.array([1.0, 2e-30], np.float32), expected)   # small values keep their own scale


def test_tensor_ulps_are_relative_to_the_largest_value():
    t = Numerics(8, per_tensor=True).tolerance(np.float32)
    expected = np.array([1000.0, 0.0], np.float32)
    assert t.mismatch(np.array([1000.0, 1e-4], np.float32), expected) is None    # 1e-4 < 8 ulps of 1000
    assert t.mismatch(np.array([1000.0, 1e-3], np.float32), expected)


def test_infinities_and_nans_must_sit_in_the_same_places():
    t = Numerics(8, per_tensor=True).tolerance(np.float32)
    assert t.mismatch(np.array([np.inf, 1.0], np.float32), np.array([np.inf, 1.0], np.float32)) is None
    assert t.mismatch(np.array([-np.inf, 1.0], np.float32), np.array([np.inf, 1.0], np.float32))
    assert t.mismatch(np.array([3e38, 1.0], np.float32), np.array([np.inf, 1.0], np.float32))
    assert t.mismatch(np.array([np.nan, 1.0], np.float32), np.array([1.0, 1.0], np.float32))


def test_dtype_and_shape_are_never_tolerated():
    t = Numerics(100).tolerance(np.float32)
    assert "dtype" in t.mismatch(np.zeros(2, np.float64), np.zeros(2, np.float32))
    assert "shape" in t.mismatch(np.zeros(3, np.float32), np.zeros(2, np.float32))


def test_combined_keeps_the_loosest_scale_and_zero_rule():
    total = combined([EXACT, EXACT_BUT_ZERO_SIGN, Numerics(4), Numerics(8, per_tensor=True)])
    assert (total.ulps, total.per_tensor, total.zero_sign) == (12, True, False)


def test_canonical_nan_makes_files_byte_stable():
    a = np.array([1.0, -np.float32(np.nan)], np.float32)
    b = np.array([1.0, np.float32(np.nan)], np.float32)
    assert canonical(a).tobytes() == canonical(b).tobytes()
