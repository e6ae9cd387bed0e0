"""tf.cond, tf.case and tf.while_loop: built like TF1, run by the Session like TF1 runs them.

Every program is built by graphdef and by tf.compat.v1 (control flow v1) and run by both;
TensorFlow also runs the GraphDef graphdef saved (tests/support/cflow_oracle.py).
"""

import numpy as np
import pytest

import graphdef
from graphdef.framework.errors import InvalidArgumentError
from tests.support.cflow_oracle import build_ours, check, tf1  # noqa: F401  (tf1 is a fixture)
from tests.support.op_oracle import tf_oracle  # noqa: F401


def _cond_program(api):
    x = api.placeholder(api.float32, [3], name="x")
    p = api.placeholder(api.bool, [], name="p")
    y = api.cond(p, lambda: x * 2.0 + 1.0, lambda: api.square(x) - x)
    return [y]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("p", [True, False])
def test_cond_takes_one_branch(tf1, p):
    x = np.array([1.5, -2.0, 3.0], np.float32)
    (y,) = check(tf1, _cond_program, {"x": x, "p": p})
    np.testing.assert_allclose(y, x * 2 + 1 if p else x * x - x, rtol=1e-6)


def _nested_cond_program(api):
    x = api.placeholder(api.float32, [], name="x")

    def positive():
        return api.cond(x > 10.0, lambda: x - 10.0, lambda: x * 3.0)

    def negative():
        return api.cond(x < -10.0, lambda: -x, lambda: api.constant(7.0))

    return [api.cond(x > 0.0, positive, negative)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("x", [20.0, 4.0, -20.0, -4.0])
def test_nested_conds(tf1, x):
    (y,) = check(tf1, _nested_cond_program, {"x": np.float32(x)})
    expected = (x - 10 if x > 10 else x * 3) if x > 0 else (-x if x < -10 else 7.0)
    assert y == np.float32(expected)


def _structured_cond_program(api):
    x = api.placeholder(api.float32, [2], name="x")
    pair = api.cond(api.reduce_sum(x) > 0.0,
                    lambda: (x + 1.0, {"a": x * x, "b": api.cast(x, api.int32)}),
                    lambda: (x - 1.0, {"a": -x, "b": api.zeros([2], api.int32)}))
    return [pair[0], pair[1]["a"], pair[1]["b"]]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("sign", [1, -1])
def test_cond_returns_nested_structures(tf1, sign):
    x = np.array([2.5, 1.0], np.float32) * sign
    first, a, b = check(tf1, _structured_cond_program, {"x": x})
    if sign > 0:
        np.testing.assert_array_equal(first, x + 1)
        np.testing.assert_array_equal(b, x.astype(np.int32))
    else:
        np.testing.assert_array_equal(a, -x)


def _case_program(api):
    x = api.placeholder(api.int32, [], name="x")
    return [api.case([(x < 0, lambda: api.constant(-1)), (x < 10, lambda: x * 2)], default=lambda: x + 100)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("x", [-5, 3, 50])
def test_case(tf1, x):
    (y,) = check(tf1, _case_program, {"x": np.int32(x)}, same_structure=False)
    assert y == (-1 if x < 0 else x * 2 if x < 10 else x + 100)


def _cond_gradient_program(api):
    x = api.placeholder(api.float32, [3], name="x")
    w = api.placeholder(api.float32, [3], name="w")
    y = api.cond(api.reduce_sum(x) > 0.0, lambda: api.reduce_sum(x * w * x), lambda: api.reduce_sum(api.exp(x) + w))
    return [y] + api.gradients(y, [x, w])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_gradients_through_cond(tf1, sign):
    x = np.array([0.5, 1.5, -0.25], np.float32) * sign
    w = np.array([2.0, -1.0, 3.0], np.float32)
    _, gx, gw = check(tf1, _cond_gradient_program, {"x": x, "w": w}, same_structure=False)
    if sign > 0:
        np.testing.assert_allclose(gx, 2 * x * w, rtol=1e-6)
        np.testing.assert_allclose(gw, x * x, rtol=1e-6)
    else:
        np.testing.assert_allclose(gx, np.exp(x), rtol=1e-6)
        np.testing.assert_allclose(gw, np.ones(3), rtol=1e-6)


def test_fetching_a_dead_tensor_names_it():
    graph, (y,) = build_ours(_cond_program)
    taken = graph.get_operation_by_name("cond/mul").outputs[0]
    with graphdef.Session(graph=graph) as sess:
        assert sess.run(taken, {"x:0": [1, 2, 3], "p:0": True}).tolist() == [2, 4, 6]
        with pytest.raises(InvalidArgumentError, match="'cond/mul:0' is dead"):
            sess.run(taken, {"x:0": [1, 2, 3], "p:0": False})


# -- while loops --------------------------------------------------------------------------

def _loop_program(api):
    n = api.placeholder(api.int32, [], name="n")
    x = api.placeholder(api.float32, [2], name="x")
    i, acc = api.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * x + api.cast(i, api.float32)),
                            [api.constant(0), api.ones([2])])
    return [i, acc]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("n", [0, 1, 7])
def test_while_loop(tf1, n):
    x = np.array([0.5, -1.5], np.float32)
    i, acc = check(tf1, _loop_program, {"n": np.int32(n), "x": x})
    expected = np.ones(2, np.float64)
    for k in range(n):
        expected = expected * x + k
    assert i == n
    np.testing.assert_allclose(acc, expected, rtol=1e-5)


def _nested_loop_program(api):
    n = api.placeholder(api.int32, [], name="n")

    def outer(i, total):
        _, inner_total = api.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j * i), [0, total])
        return i + 1, inner_total

    return list(api.while_loop(lambda i, t: i < n, outer, [api.constant(0), api.constant(0)]))


@pytest.mark.tf_oracle
def test_nested_while_loops(tf1):
    i, total = check(tf1, _nested_loop_program, {"n": np.int32(6)})
    assert (i, total) == (6, sum(j * k for k in range(6) for j in range(k)))


def _max_iterations_program(api):
    x = api.placeholder(api.float32, [], name="x")
    return [api.while_loop(lambda v: v < 1e6, lambda v: v * 2.0, [x], maximum_iterations=5)]


@pytest.mark.tf_oracle
def test_maximum_iterations(tf1):
    (v,) = check(tf1, _max_iterations_program, {"x": np.float32(3.0)}, same_structure=False)
    assert v == 96.0


def _shape_invariant_program(api):
    x = api.placeholder(api.float32, [None], name="x")
    grown = api.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, api.concat([t, t * 2.0], 0)),
                           [api.constant(0), x], shape_invariants=[api.TensorShape([]), api.TensorShape([None])])
    return [grown[1]]


@pytest.mark.tf_oracle
def test_shape_invariants_let_a_loop_variable_grow(tf1):
    (t,) = check(tf1, _shape_invariant_program, {"x": np.array([1.0], np.float32)})
    assert t.tolist() == [1, 2, 2, 4, 2, 4, 4, 8]


def test_a_growing_loop_variable_without_invariant_is_refused():
    with graphdef.Graph().as_default():
        x = graphdef.constant([1.0])
        with pytest.raises(ValueError, match="shape_invariants"):
            graphdef.while_loop(lambda t: graphdef.constant(True), lambda t: graphdef.concat([t, t], 0), [x])


def _cond_in_loop_program(api):
    n = api.placeholder(api.int32, [], name="n")

    def body(i, s):
        return i + 1, api.cond(api.equal(api.math.floormod(i, 2), 0), lambda: s + i, lambda: s - 1)

    return list(api.while_loop(lambda i, s: i < n, body, [api.constant(0), api.constant(0)]))


@pytest.mark.tf_oracle
def test_cond_inside_a_loop(tf1):
    _, s = check(tf1, _cond_in_loop_program, {"n": np.int32(9)})
    assert s == sum(i if i % 2 == 0 else -1 for i in range(9))


def _loop_in_cond_program(api):
    p = api.placeholder(api.bool, [], name="p")
    x = api.placeholder(api.float32, [], name="x")
    looped = lambda: api.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * x), [0, x])[1]  # noqa: E731
    return [api.cond(p, looped, lambda: x - 1.0)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("p", [True, False])
def test_loop_inside_a_cond_branch(tf1, p):
    (y,) = check(tf1, _loop_in_cond_program, {"p": p, "x": np.float32(2.0)})
    assert y == (32.0 if p else 1.0)


def test_loop_values_cannot_be_fetched_from_inside_the_frame():
    graph, (i, _) = build_ours(_loop_program)
    with graphdef.Session(graph=graph) as sess:
        with pytest.raises(InvalidArgumentError, match="inside (the )?loop frame"):
            sess.run("while/add:0", {"n:0": 3, "x:0": [1, 1]})


def test_saved_loop_round_trips_through_a_file(tmp_path):
    graph, (i, acc) = build_ours(_loop_program)
    graphdef.save(graph, tmp_path / "loop.pb")
    loaded = graphdef.load(tmp_path / "loop.pb")
    feeds = {"n:0": 4, "x:0": np.array([2.0, 0.5], np.float32)}
    with graphdef.Session(graph=graph) as a, graphdef.Session(graph=loaded) as b:
        for x, y in zip(a.run([i, acc], feeds), b.run([i.name, acc.name], feeds)):
            np.testing.assert_array_equal(x, y)
    assert loaded.as_graph_def() == graph.as_graph_def()


# -- gradients through while loops ----------------------------------------------------------

def _loop_gradient_program(api):
    x = api.placeholder(api.float32, [2], name="x")
    w = api.placeholder(api.float32, [2], name="w")
    n = api.placeholder(api.int32, [], name="n")
    _, acc = api.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, api.tanh(a * x + w)),
                            [api.constant(0), api.ones([2]) * w])
    loss = api.reduce_sum(acc * acc)
    return [loss] + api.gradients(loss, [x, w])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("n", [0, 1, 5])
def test_gradients_through_a_while_loop(tf1, n):
    x = np.array([0.7, -1.3], np.float32)
    w = np.array([0.25, 0.5], np.float32)
    _, gx, gw = check(tf1, _loop_gradient_program, {"x": x, "w": w, "n": np.int32(n)}, same_structure=False,
                      run_tf1_graph=False)
    # central differences in float64 of the same recurrence
    def loss(x, w):
        a = w.astype(np.float64)
        for _ in range(n):
            a = np.tanh(a * x + w)
        return (a * a).sum()
    eps = 1e-6
    for grad, which in ((gx, 0), (gw, 1)):
        numeric = []
        for k in range(2):
            args = [x.astype(np.float64), w.astype(np.float64)]
            up, down = [a.copy() for a in args], [a.copy() for a in args]
            up[which][k] += eps
            down[which][k] -= eps
            numeric.append((loss(*up) - loss(*down)) / (2 * eps))
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5)


def _nested_loop_gradient_program(api):
    x = api.placeholder(api.float32, [], name="x")

    def outer(i, v):
        inner = api.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u * x + 1.0), [0, v])[1]
        return i + 1, inner

    _, y = api.while_loop(lambda i, v: i < 3, outer, [api.constant(0), x])
    return [y] + api.gradients(y, [x])


@pytest.mark.tf_oracle
def test_gradients_through_nested_while_loops(tf1):
    y, gx = check(tf1, _nested_loop_gradient_program, {"x": np.float32(1.5)}, same_structure=False,
                  run_tf1_graph=False)
    # y = f(f(f(x))) with 0, 1 and 2 inner steps of u -> u * x + 1: y is a polynomial in x
    poly = np.polynomial.Polynomial([0, 1])
    for i in range(3):
        for _ in range(i):
            poly = poly * np.polynomial.Polynomial([0, 1]) + 1
    assert np.isclose(y, poly(1.5), rtol=1e-6) and np.isclose(gx, poly.deriv()(1.5), rtol=1e-5)


def _mixed_gradient_program(api):
    x = api.placeholder(api.float32, [], name="x")
    p = api.placeholder(api.bool, [], name="p")
    looped = lambda: api.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])[1]  # noqa: E731
    y = api.cond(p, looped, lambda: x * 5.0)
    z = api.while_loop(lambda i, v: i < 4,
                       lambda i, v: (i + 1, api.cond(v > 1.0, lambda: v * 0.5, lambda: v * x)), [0, x])[1]
    return [y, z] + api.gradients(y, [x]) + api.gradients(z, [x])


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("x, p", [(2.0, True), (2.0, False), (0.9, True)])
def test_gradients_of_loops_in_conds_and_conds_in_loops(tf1, x, p):
    y, z, gy, gz = check(tf1, _mixed_gradient_program, {"x": np.float32(x), "p": p}, same_structure=False,
                         run_tf1_graph=False)
    assert np.isclose(gy, 4 * x ** 3 if p else 5.0, rtol=1e-6)
    if x < 1:  # v stays below 1, so every step multiplies by x: z = x^5
        assert np.isclose(gz, 5 * x ** 4, rtol=1e-5)


def _singleton_cond_program(api):
    x = api.placeholder(api.float32, [], name="x")
    unpacked = api.cond(x > 0.0, lambda: [x * 2.0], lambda: [x])
    kept = api.cond(x > 0.0, lambda: [x + 1.0], lambda: [x], strict=True)
    return [unpacked, kept[0]]


@pytest.mark.tf_oracle
def test_a_one_item_branch_result_is_unpacked_unless_strict(tf1):
    assert check(tf1, _singleton_cond_program, {"x": np.float32(3.0)}) == [6.0, 4.0]
