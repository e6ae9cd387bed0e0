"""graphrun-cc's variable kernels: VariableV2, Assign, AssignAdd, AssignSub and ApplyGradientDescent, the
order their reads and writes take through control inputs, and their refusals.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, bool_attr, fails, feeds, ok, output, outputs, variable_graph
from tests.support.numerics_policy import assert_same


def test_variables_assign_then_update_through_control_inputs(runner, tmp_path):
    g = Graph()
    variable_graph(g)
    g.const("init", [1.0, 2.0], np.float32)
    g.const("step", [0.5, 0.5], np.float32)
    g.op("v/Assign", "Assign", ["v", "init"], np.float32)
    g.op("inc", "AssignAdd", ["v", "step", "^v/Assign"], np.float32)
    g.op("dec", "AssignSub", ["v", "init", "^inc"], np.float32)
    # The ref is read when its consumer runs: after dec, although v was ready first.
    g.op("final", "Identity", ["v", "^dec"], np.float32)
    assert ok(runner, g.save(tmp_path / "model.pb")) == "final:0 float32 [2] = [0.5, 0.5]\n"


def test_uninitialized_variable_exits_4(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    g.op("w/read", "Identity", ["w"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"


def test_assign_shape_is_validated(runner, tmp_path):
    g = Graph()
    variable_graph(g, shape=(2,))
    g.placeholder("value", np.float32)
    g.op("set", "Assign", ["v", "value"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), *feeds(value=[1, 2, 3]))
    assert "node 'set' (Assign)" in line


def test_ref_input_must_name_a_variable(runner, tmp_path):
    g = Graph()
    g.const("c", [1.0], np.float32)
    g.op("set", "Assign", ["c", "c"], np.float32)
    assert "must name a variable" in fails(runner, 3, g.save(tmp_path / "model.pb"))


def apply_gradient_descent_graph(dtype, init, alpha, delta):
    g = Graph()
    variable_graph(g, dtype=dtype, shape=np.shape(init))
    g.const("init", init, dtype)
    g.const("alpha", alpha, dtype)
    g.const("delta", delta, dtype)
    g.op("v/Assign", "Assign", ["v", "init"], dtype)
    g.op("step1", "ApplyGradientDescent", ["v", "alpha", "delta", "^v/Assign"], dtype,
         use_locking=bool_attr(False))
    g.op("step2", "ApplyGradientDescent", ["v", "alpha", "delta", "^step1"], dtype)
    g.op("read", "Identity", ["v", "^step2"], dtype)
    return g


def test_apply_gradient_descent_updates_the_variable(runner, tmp_path):
    init = np.array([[1.0, 2.0], [0.1, -3.0]], np.float32)
    alpha = np.float32(0.1)
    delta = np.array([[2.0, -4.0], [0.3, 1e-3]], np.float32)
    model = apply_gradient_descent_graph(np.float32, init, alpha, delta).save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "step1", "--fetch", "read")
    once = init - alpha * delta  # float32 throughout: the product is rounded before subtracting
    assert_same(got["step1:0"], once)
    assert_same(got["read:0"], once - alpha * delta)


def test_apply_gradient_descent_integers_and_scalars(runner, tmp_path):
    init = np.array([2147483647, 10], np.int32)
    with np.errstate(all="ignore"):
        expected = init - np.int32(-1) * np.array([1, 3], np.int32) - np.int32(-1) * np.array([1, 3], np.int32)
    g = apply_gradient_descent_graph(np.int32, init, -1, [1, 3])
    assert_same(output(runner, g.save(tmp_path / "model.pb"), "--fetch", "read"), expected)
    g = apply_gradient_descent_graph(np.float64, 3.0, 0.25, 2.0)
    assert_same(output(runner, g.save(tmp_path / "model.pb"), "--fetch", "read"), np.float64(2.0))


def test_apply_gradient_descent_needs_an_initialized_variable(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    g.const("alpha", 0.5, np.float32)
    g.const("delta", [1.0, 1.0], np.float32)
    g.op("step", "ApplyGradientDescent", ["w", "alpha", "delta"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"


@pytest.mark.parametrize("alpha, delta, message", [
    (0.5, [1.0, 2.0, 3.0], "variable 'v' has shape [2] but delta has shape [3]"),
    ([0.5], [1.0, 2.0], "hyper-parameter alpha for variable 'v' must be a scalar, got shape [1]"),
])
def test_apply_gradient_descent_checks_shapes(runner, tmp_path, alpha, delta, message):
    g = Graph()
    variable_graph(g)
    g.const("init", [1.0, 2.0], np.float32)
    g.op("v/Assign", "Assign", ["v", "init"], np.float32)
    g.placeholder("alpha", np.float32)
    g.placeholder("delta", np.float32)
    g.op("step", "ApplyGradientDescent", ["v", "alpha", "delta", "^v/Assign"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), *feeds(alpha=alpha, delta=delta))
    assert line == f"graphrun-cc: node 'step' (ApplyGradientDescent): {message}"


def test_apply_gradient_descent_ref_must_name_a_variable(runner, tmp_path):
    g = Graph()
    g.const("c", [1.0], np.float32)
    g.op("step", "ApplyGradientDescent", ["c", "c", "c"], np.float32)
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert "input 0 ('var') must name a variable node directly" in line
