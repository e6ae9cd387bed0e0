"""graphrun-cc's kernels for training graphs: comparisons, logic, selection, softmax and losses, ArgMax/ArgMin,
OneHot, Min/Prod, Log1p, SquaredDifference, ZerosLike/OnesLike, ApplyMomentum, ApplyAdam.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import (Graph, binary_graph, bool_attr, fails, feeds, output, outputs, type_attr,
                                      unary_graph, variable_graph)
from tests.support.numerics_policy import assert_conforms, assert_same


def test_comparisons_broadcast_integers_and_bools(runner, tmp_path):
    a, b = np.array([[1], [5]], np.int64), np.array([0, 1, 5], np.int64)
    g = Graph()
    g.const("a", a)
    g.const("b", b)
    g.const("p", [True, False])
    g.const("q", [[True], [False]])
    g.node("gt", "Greater", ["a", "b"], T=type_attr(np.int64))
    g.node("eq", "Equal", ["p", "q"], T=type_attr(np.bool_))
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    assert_same(got["gt:0"], a > b)
    assert_same(got["eq:0"], np.array([[True, False], [False, True]]))


def test_orderings_refuse_bool(runner, tmp_path):
    line = fails(runner, 3, binary_graph(tmp_path, "Less", [True], [False]))
    assert "attr 'T' is bool; Less accepts" in line


def test_logical_ops_take_only_bools(runner, tmp_path):
    g = Graph()
    g.const("x", [1], np.int32)
    g.node("not", "LogicalNot", ["x"])
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert line.endswith("node 'not' (LogicalNot): input 0 ('x') is int32 from 'x:0' but the node expects bool")


def select_graph(tmp_path, op, condition, t, e):
    g = Graph()
    g.const("c", condition, np.bool_)
    g.const("t", t)
    g.const("e", e)
    g.op("z", op, ["c", "t", "e"], np.asarray(t).dtype)
    return g.save(tmp_path / "model.pb")


T22 = np.array([[1, 2], [3, 4]], np.int32)


E22 = -T22


@pytest.mark.parametrize("condition, expected", [
    (True, T22), (False, E22),                                  # a scalar picks a whole tensor
    ([False, True], [[-1, -2], [3, 4]]),                        # a vector picks rows
    ([[True, False], [False, True]], [[1, -2], [-3, 4]]),       # t's shape picks elements
])
def test_select_v1(runner, tmp_path, condition, expected):
    model = select_graph(tmp_path, "Select", condition, T22, E22)
    assert_same(output(runner, model), np.array(expected, np.int32))


@pytest.mark.parametrize("condition, t, e, message", [
    ([True, False, True], T22, E22, "condition [3] must be a scalar, a vector over t's first dim, or t's shape [2,2]"),
    ([[True, False]], T22, E22, "condition [1,2] must be a scalar"),
    (True, T22, [1, 2], "t [2,2] and e [2] must have the same shape"),
])
def test_select_v1_refuses_other_shapes(runner, tmp_path, condition, t, e, message):
    line = fails(runner, 4, select_graph(tmp_path, "Select", condition, np.asarray(t, np.int32),
                                         np.asarray(e, np.int32)))
    assert line.startswith(f"graphrun-cc: node 'z' (Select): {message}")


def test_select_v2_broadcasts_all_three(runner, tmp_path):
    c = np.array([[True], [False]])
    t = np.array([1.5, 2.5, 3.5], np.float64)
    e = np.float64(-1.0)
    assert_same(output(runner, select_graph(tmp_path, "SelectV2", c, t, e)), np.where(c, t, e))
    line = fails(runner, 4, select_graph(tmp_path, "SelectV2", [True, False], t, e))
    assert "condition [2], t [3] and e [] cannot be broadcast together" in line


def softmax64(x):
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def test_softmax_and_log_softmax_over_the_last_axis(runner, tmp_path):
    # Rank 3, a row of huge logits (exp would overflow without the max subtracted), 20 classes.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 20)).astype(np.float32) * 4
    x[1, 2] += 1e4
    g = Graph()
    g.const("x", x)
    g.op("p", "Softmax", ["x"], np.float32)
    g.op("logp", "LogSoftmax", ["x"], np.float32)
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model)
    assert_conforms(got["p:0"], np.exp(softmax64(x)).astype(np.float32), model, "p:0")
    assert_conforms(got["logp:0"], softmax64(x).astype(np.float32), model, "logp:0")


def test_softmax_of_a_row_with_nan_is_nan(runner, tmp_path):
    x = np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 2.0]])
    got = output(runner, unary_graph(tmp_path, "Softmax", x))
    assert np.isnan(got[0]).all() and np.allclose(got[1], np.exp(softmax64(x[1])))


def test_softmax_needs_a_dim(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.op("p", "Softmax", ["x"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--feed", "x=1")
    assert line == "graphrun-cc: node 'p' (Softmax): logits must have at least one dim, got shape []"


LOGITS = np.array([[1.0, 2.0, 3.0, 0.5], [-1.0, 0.0, 2.0, 2.0], [50.0, -50.0, 0.0, 0.0]], np.float32)


def xent_graph(tmp_path, op, labels, labels_dtype=None):
    g = Graph()
    g.placeholder("x", np.float32)
    g.placeholder("labels", labels_dtype or np.float32)
    attrs = {"Tlabels": type_attr(labels_dtype)} if labels_dtype else {}
    g.op("xent", op, ["x", "labels"], np.float32, **attrs)
    return g.save(tmp_path / "model.pb"), ["--feed", f"x={json.dumps(LOGITS.tolist())}",
                                           "--feed", f"labels={json.dumps(np.asarray(labels).tolist())}"]


def test_softmax_cross_entropy(runner, tmp_path):
    labels = np.array([[0, 0, 1, 0], [0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0]], np.float32)
    model, args = xent_graph(tmp_path, "SoftmaxCrossEntropyWithLogits", labels)
    got = outputs(runner, model, *args, "--fetch", "xent:0", "--fetch", "xent:1")
    log_p = softmax64(LOGITS)
    assert_conforms(got["xent:0"], (-(labels * log_p).sum(axis=-1)).astype(np.float32), model, "xent:0")
    assert_conforms(got["xent:1"], (np.exp(log_p) - labels).astype(np.float32), model, "xent:1")


@pytest.mark.parametrize("labels_dtype", [np.int32, np.int64])
def test_sparse_softmax_cross_entropy(runner, tmp_path, labels_dtype):
    labels = np.array([2, 0, 0], labels_dtype)
    model, args = xent_graph(tmp_path, "SparseSoftmaxCrossEntropyWithLogits", labels, labels_dtype)
    got = outputs(runner, model, *args, "--fetch", "xent:0", "--fetch", "xent:1")
    log_p = softmax64(LOGITS)
    backprop = np.exp(log_p)
    backprop[[0, 1, 2], labels] -= 1
    assert_conforms(got["xent:0"], (-log_p[[0, 1, 2], labels]).astype(np.float32), model, "xent:0")
    assert_conforms(got["xent:1"], backprop.astype(np.float32), model, "xent:1")


@pytest.mark.parametrize("op, labels, labels_dtype, message", [
    ("SparseSoftmaxCrossEntropyWithLogits", [2, 4, 0], np.int64, "label 4 (row 1) is outside [0, 4)"),
    ("SparseSoftmaxCrossEntropyWithLogits", [2, -1, 0], np.int32, "label -1 (row 1) is outside [0, 4)"),
    ("SparseSoftmaxCrossEntropyWithLogits", [2, 1], np.int32, "labels [2] must be [batch] for logits [3,4]"),
    ("SoftmaxCrossEntropyWithLogits", [[1.0, 0.0]], None, "logits [3,4] and labels [1,2] must have the same shape"),
])
def test_cross_entropy_errors_name_the_node(runner, tmp_path, op, labels, labels_dtype, message):
    model, args = xent_graph(tmp_path, op, labels, labels_dtype)
    assert fails(runner, 4, model, *args) == f"graphrun-cc: node 'xent' ({op}): {message}"


def test_l2_loss_sums_as_numpy_does(runner, tmp_path):
    # 1000 float32 squares: numpy's pairwise summation gives different low bits from a
    # left-to-right sum; the runner sums the same way, so the results are identical.
    x = np.random.default_rng(1).normal(size=(10, 100)).astype(np.float32)
    expected = np.sum(x * x, dtype=np.float32) / np.float32(2)
    left_to_right = np.float32(0)
    for v in (x * x).ravel():
        left_to_right = np.float32(left_to_right + v)
    assert left_to_right / np.float32(2) != expected  # the data tells the two apart
    assert_same(output(runner, unary_graph(tmp_path, "L2Loss", x)), expected)


def arg_graph(tmp_path, op, x, axis, output_type=None):
    g = Graph()
    g.const("x", x)
    g.const("axis", axis, np.int32)
    attrs = {"output_type": type_attr(output_type)} if output_type else {}
    g.op("z", op, ["x", "axis"], np.asarray(x).dtype, **attrs)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("op, fn", [("ArgMax", np.argmax), ("ArgMin", np.argmin)])
def test_arg_extremes_take_the_first_index(runner, tmp_path, op, fn):
    x = np.array([[3, 1, 3, 0], [5, 5, -1, -1], [2, np.nan, 7, np.nan]], np.float32)
    for axis, output_type in ((1, None), (-2, np.int32), (0, np.int64)):
        got = output(runner, arg_graph(tmp_path, op, x, axis, output_type))
        assert_same(got, fn(x, axis=axis).astype(output_type or np.int64))  # numpy: the first NaN wins


def test_arg_max_of_bools_and_unsigned(runner, tmp_path):
    flags = np.array([[False, True, True], [False, False, False]])
    assert_same(output(runner, arg_graph(tmp_path, "ArgMax", flags, 1)), np.array([1, 0], np.int64))
    small = np.array([200, 3, 255, 255], np.uint8)
    assert_same(output(runner, arg_graph(tmp_path, "ArgMin", small, 0)), np.int64(1))


@pytest.mark.parametrize("x, axis, message", [
    (np.zeros((2, 0), np.float32), 1, "cannot take ArgMax along axis 1, which is empty in shape [2,0]"),
    (np.zeros((2, 3), np.float32), 2, "axis 2 is out of range for a tensor of rank 2"),
    (np.float32(1), 0, "the input must have at least one dim, got shape []"),
])
def test_arg_max_errors(runner, tmp_path, x, axis, message):
    assert fails(runner, 4, arg_graph(tmp_path, "ArgMax", x, axis)) == f"graphrun-cc: node 'z' (ArgMax): {message}"


def one_hot_graph(tmp_path, indices, depth, on, off, axis=None):
    g = Graph()
    g.const("i", indices)
    g.const("depth", depth, np.int32)
    g.const("on", on)
    g.const("off", off)
    attrs = {"TI": type_attr(np.asarray(indices).dtype)}
    if axis is not None:
        attrs["axis"] = graph_pb2.AttrValue(i=axis)
    g.op("h", "OneHot", ["i", "depth", "on", "off"], np.asarray(on).dtype, **attrs)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_on_every_axis(runner, tmp_path, axis):
    indices = np.array([[0, 2, -1], [3, 1, 1]], np.int64)  # -1 and 3 are out of range: all off
    hot = np.where(indices[..., None] == np.arange(3), np.float64(2.5), np.float64(-1))
    expected = hot if axis in (None, -1) else np.moveaxis(hot, -1, axis)
    assert_same(output(runner, one_hot_graph(tmp_path, indices, 3, 2.5, -1.0, axis)), expected)


def test_one_hot_uint8_indices_and_bool_values(runner, tmp_path):
    got = output(runner, one_hot_graph(tmp_path, np.array([255, 1], np.uint8), 2, True, False))
    assert_same(got, np.array([[False, False], [False, True]]))


@pytest.mark.parametrize("depth, on, axis, message", [
    (-1, 1.0, None, "depth must not be negative, got -1"),
    (3, [1.0], None, "on_value must be a scalar, got shape [1]"),
    (3, 1.0, 3, "axis 3 is out of range for indices of rank 1"),
])
def test_one_hot_errors(runner, tmp_path, depth, on, axis, message):
    model = one_hot_graph(tmp_path, np.array([0, 1], np.int32), depth, np.asarray(on, np.float32),
                          np.float32(0), axis)
    assert fails(runner, 4, model) == f"graphrun-cc: node 'h' (OneHot): {message}"


def test_one_hot_axis_below_minus_one_is_an_invalid_model(runner, tmp_path):
    model = one_hot_graph(tmp_path, np.array([0], np.int32), 2, np.float32(1), np.float32(0), axis=-2)
    assert "attr 'axis' is -2; OneHot needs at least -1" in fails(runner, 3, model)


def test_log1p_and_squared_difference(runner, tmp_path):
    x = np.array([1e-10, 0.5, -0.5, 3.0], np.float64)
    model = unary_graph(tmp_path, "Log1p", x)
    assert_conforms(output(runner, model), np.log1p(x), model, "z")
    a, b = np.array([1.5, -2.0], np.float32), np.array([[0.25], [4.0]], np.float32)
    assert_same(output(runner, binary_graph(tmp_path, "SquaredDifference", a, b)), np.square(a - b))
    big = np.array([100, -100], np.int8)
    with np.errstate(over="ignore"):
        expected = np.square(big - np.int8(-100))
    assert_same(output(runner, binary_graph(tmp_path, "SquaredDifference", big, np.int8(-100))), expected)
    assert "SquaredDifference accepts" in fails(runner, 3, binary_graph(tmp_path, "SquaredDifference", [1], [2],
                                                                          np.uint8))


def optimizer_graph(op, dtype, variables, inputs, **attrs):
    """Variables initialized from constants, then `op` twice on them (step1, step2), then reads."""
    g = Graph()
    assigns = []
    for name, value in variables.items():
        variable_graph(g, name, dtype, np.shape(value))
        g.const(f"{name}/init", value, dtype)
        assigns.append(g.op(f"{name}/Assign", "Assign", [name, f"{name}/init"], dtype))
    names = []
    for i, value in enumerate(inputs):
        if isinstance(value, str):  # a placeholder's name: fed at run time
            names.append(g.placeholder(value, dtype))
        else:
            names.append(g.const(f"in{i}", value, dtype))
    refs = list(variables)
    g.op("step1", op, refs + names + ["^" + a for a in assigns], dtype, **attrs)
    g.op("step2", op, refs + names + ["^step1"], dtype, **attrs)
    for name in variables:
        g.op(f"{name}/read", "Identity", [name, "^step2"], dtype)
    return g


def test_apply_momentum_matches_numpy_bit_for_bit(runner, tmp_path):
    w0 = np.array([1.0, -2.0, 0.3], np.float32)
    a0 = np.array([0.5, 0.5, -0.1], np.float32)
    lr, grad, mom = np.float32(0.1), np.array([2.0, -4.0, 0.7], np.float32), np.float32(0.9)
    for nesterov in (False, True):
        g = optimizer_graph("ApplyMomentum", np.float32, {"w": w0, "acc": a0}, [lr, grad, mom],
                            use_nesterov=bool_attr(nesterov))
        got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "w/read", "--fetch", "acc/read")
        w, a = w0, a0
        for _ in range(2):  # float32 numpy, in Python's (TensorFlow's) order of rounding
            a = a * mom + grad
            w = w - (grad * lr + a * mom * lr if nesterov else a * lr)
        assert_same(got["w/read:0"], w)
        assert_same(got["acc/read:0"], a)


def test_apply_momentum_on_integers_wraps(runner, tmp_path):
    g = optimizer_graph("ApplyMomentum", np.int32, {"w": [2**31 - 1, 0], "acc": [1, 1]},
                        [np.int32(-1), [1, 2], np.int32(2)])
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "w/read")
    with np.errstate(over="ignore"):
        w, a = np.array([2**31 - 1, 0], np.int32), np.array([1, 1], np.int32)
        for _ in range(2):
            a = a * np.int32(2) + np.array([1, 2], np.int32)
            w = w - a * np.int32(-1)
    assert_same(got["w/read:0"], w)


def adam_numpy(w, m, v, grad, steps, lr, beta1, beta2, eps, nesterov=False):
    """Float32 numpy Adam in Python's order of rounding; beta powers as the optimizer keeps them."""
    one = np.float32(1)
    b1p, b2p = beta1, beta2
    for _ in range(steps):
        lr_t = lr * np.sqrt(one - b2p) / (one - b1p)
        m = beta1 * m + (one - beta1) * grad
        v = beta2 * v + (one - beta2) * grad * grad
        direction = beta1 * m + (one - beta1) * grad if nesterov else m
        w = w - lr_t * direction / (np.sqrt(v) + eps)
        b1p, b2p = b1p * beta1, b2p * beta2
    return w, m, v


@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_adam_matches_numpy_bit_for_bit(runner, tmp_path, nesterov):
    w0 = np.array([1.0, -1.0, 0.5, 3.0], np.float32)
    zeros = np.zeros(4, np.float32)
    grad = np.array([0.5, -2.0, 0.0, 1e-3], np.float32)
    lr, beta1, beta2, eps = np.float32(0.01), np.float32(0.9), np.float32(0.999), np.float32(1e-8)
    # The graph feeds the same beta powers to both steps; numpy's second step uses the
    # squared ones, so run one step at a time: step1 only, through --fetch step1.
    g = optimizer_graph("ApplyAdam", np.float32, {"w": w0, "m": zeros, "s": zeros},
                        [beta1, beta2, lr, beta1, beta2, eps, grad], use_nesterov=bool_attr(nesterov))
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "step1")
    w, _, _ = adam_numpy(w0, zeros, zeros, grad, 1, lr, beta1, beta2, eps, nesterov)
    assert_same(got["step1:0"], w)


def test_apply_adam_refuses_integers(runner, tmp_path):
    g = optimizer_graph("ApplyAdam", np.int32, {"w": [1], "m": [0], "s": [0]}, [1, 1, 1, 1, 1, 1, [1]])
    assert "attr 'T' is int32; ApplyAdam accepts float32, float64" in fails(runner, 3, g.save(tmp_path / "m.pb"))


@pytest.mark.parametrize("variables, feeds_, message", [
    ({"w": [1.0, 2.0], "acc": [0.0, 0.0]}, {"lr": 0.1, "grad": [1.0, 2.0, 3.0], "mom": 0.9},
     "variable 'w' has shape [2] but grad has shape [3]"),
    ({"w": [1.0, 2.0], "acc": [0.0, 0.0]}, {"lr": [0.1], "grad": [1.0, 2.0], "mom": 0.9},
     "hyper-parameter lr for variable 'w' must be a scalar, got shape [1]"),
    ({"w": [1.0, 2.0], "acc": [0.0]}, {"lr": 0.1, "grad": [1.0, 2.0], "mom": 0.9},
     "accumulator 'acc' has shape [1] but variable 'w' has shape [2]"),
])
def test_apply_momentum_checks_shapes(runner, tmp_path, variables, feeds_, message):
    g = optimizer_graph("ApplyMomentum", np.float32, variables, ["lr", "grad", "mom"])
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--fetch", "step1", *feeds(**feeds_))
    assert line == f"graphrun-cc: node 'step1' (ApplyMomentum): {message}"


def test_apply_adam_checks_hyper_parameters(runner, tmp_path):
    g = optimizer_graph("ApplyAdam", np.float32, {"w": [1.0], "m": [0.0], "s": [0.0]},
                        ["b1p", "b2p", "lr", "b1", "b2", "eps", "grad"])
    args = feeds(b1p=0.9, b2p=0.999, lr=0.1, b1=0.9, b2=0.999, eps=[1e-8, 1e-8], grad=[1.0])
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--fetch", "step1", *args)
    assert line == ("graphrun-cc: node 'step1' (ApplyAdam): hyper-parameter epsilon for variable 'w' must be "
                    "a scalar, got shape [2]")


def test_apply_momentum_needs_an_initialized_accumulator(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    variable_graph(g, "acc")
    g.const("init", [1.0, 2.0], np.float32)
    g.const("s", 0.5, np.float32)
    g.op("w/Assign", "Assign", ["w", "init"], np.float32)
    g.op("step", "ApplyMomentum", ["w", "acc", "s", "init", "s", "^w/Assign"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'acc' is not initialized; run its initializer first"
