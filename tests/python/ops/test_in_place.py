"""Kernels that write into a donated input (out=): AddV2, Sub, Mul, Tanh and Softmax give the same
bits in place as not, over the special values and broadcast forms, and refuse out= where the result
would not fit; SquaredDifference and Softmax reuse their own temporaries. The load-time pass that
puts Consts second in Mul/Add so the Session can donate the other input, on a Keras tanh GELU:
the same bits as the file run as it is, TF's answer, and no value still read overwritten."""

import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.client.session import optimization_report
from graphdef.ops import REGISTRY
from graphdef.optimize.graph_view import GraphView
from graphdef.optimize.passes.constants_second import constants_second
from tests.support.numerics_policy import assert_conforms, assert_same
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

SPECIALS = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, -3e38, 1e-30, 7.0, 0.5]
FLOATS = [np.float16, np.float32, np.float64]


def _specials(dtype, shape=(2, 14)):
    with np.errstate(over="ignore"):
        x = np.array(SPECIALS * 2, dtype).reshape(shape)
    return x


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
@pytest.mark.parametrize("op_type, ufunc", [("AddV2", np.add), ("Sub", np.subtract), ("Mul", np.multiply)])
@pytest.mark.parametrize("y_shape", [(2, 14), (14,), (1, 1), ()])
def test_binary_kernels_in_place_give_the_same_bits(op_type, ufunc, y_shape, dtype):
    x = _specials(dtype) if dtype != np.int32 else np.arange(-14, 14, dtype=dtype).reshape(2, 14) * 99991
    y = np.flip(x).reshape(-1)[:int(np.prod(y_shape))].reshape(y_shape)
    kernel = REGISTRY[op_type].kernel
    with np.errstate(all="ignore"):
        fresh = kernel(x, y)
        donated = x.copy()
        got = kernel(donated, y, out=donated)
        plain = ufunc(x, y)
    assert got is donated
    assert_same(got, fresh)
    assert_same(fresh, plain)


@pytest.mark.parametrize("op_type", ["AddV2", "Sub", "Mul"])
def test_binary_kernels_take_a_new_array_where_the_result_does_not_fit(op_type):
    kernel = REGISTRY[op_type].kernel
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    kept = x.copy()
    for y in (np.array([[1.0], [2.0]], np.float32),     # broadcasting widens x
              np.array([[1.0, 2.0, 3.0]], np.float64)):  # another dtype
        got = kernel(x, y, out=x)
        assert got is not x and got.shape == np.broadcast_shapes(x.shape, y.shape)
        assert_same(x, kept)


@pytest.mark.parametrize("dtype", FLOATS)
def test_tanh_in_place_gives_the_same_bits(dtype):
    x = np.concatenate([_specials(dtype).ravel(), np.linspace(-12, 12, 4099).astype(dtype)])
    with np.errstate(all="ignore"):
        fresh = REGISTRY["Tanh"].kernel(x)
        donated = x.copy()
        got = REGISTRY["Tanh"].kernel(donated, out=donated)
        expected = np.tanh(x.astype(np.float64)).astype(dtype)
    assert got is donated
    assert_same(got, fresh)
    why = REGISTRY["Tanh"].numerics.tolerance(dtype).mismatch(got, expected)
    assert why is None, why


def _softmax64(x):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (4, 7), (3, 40), (6,), (2, 0), (0, 3)])
def test_softmax_in_place_gives_the_same_bits(dtype, shape):
    x = (np.random.default_rng(3).normal(size=shape) * 6).astype(dtype)
    if x.size >= 8:  # a row with inf, a row with NaN, a row all -inf, a row with both zeros
        rows = x.reshape(-1, shape[-1])
        rows[0, 0], rows[1, -1] = np.inf, np.nan
        rows[-1, :] = -np.inf
        rows[-2, :2] = [0.0, -0.0]
    kernel = REGISTRY["Softmax"].kernel
    with np.errstate(all="ignore"):
        fresh = kernel(x)
        donated = x.copy()
        got = kernel(donated, out=donated)
    assert got is donated or x.size == 0
    assert_same(got, fresh)
    why = REGISTRY["Softmax"].numerics.tolerance(dtype).mismatch(got, _softmax64(x).astype(dtype))
    assert why is None, why


def test_softmax_with_no_classes_never_returns_its_input():
    x = np.zeros((3, 0), np.float32)
    assert REGISTRY["Softmax"].kernel(x) is not x


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_squared_difference_is_numpys(dtype):
    x = _specials(dtype) if dtype != np.int32 else np.arange(-14, 14, dtype=dtype).reshape(2, 14)
    kernel = REGISTRY["SquaredDifference"].kernel
    with np.errstate(all="ignore"):
        for y in (np.flip(x), x[:1, :], x[0, 3]):
            assert_same(kernel(x, y), np.square(x - y))
        assert_same(kernel(x[0, 1], x[1, 2]), np.square(x[0, 1] - x[1, 2]))  # numpy scalars


# -- constants second ------------------------------------------------------------------------------

def _graph_def(build):
    g = tf.Graph()
    with g.as_default():
        build()
    return g.as_graph_def()


def test_constants_second_swaps_only_a_const_first_mul_or_add():
    def build():
        x = tf.placeholder(tf.float32, [3], name="x")
        c = tf.constant(np.float32(0.5), name="c")
        tf.raw_op("Mul", c, x, name="const_first")
        tf.raw_op("AddV2", c, x, name="add_const_first")
        tf.raw_op("Add", c, x, name="add_v1_const_first")
        tf.raw_op("Mul", x, c, name="const_second")
        tf.raw_op("Mul", c, c, name="both_const")
        tf.raw_op("Sub", c, x, name="sub")             # not commutative
        with tf.control_dependencies([x.op]):
            tf.raw_op("Mul", c, x, name="with_control")
        tf.raw_op("Mul", c, x, name="fetched")
    graph_def = _graph_def(build)
    # TF's Add also joins strings (graphdef runs no strings, but a file may hold them)
    s, t, joined = graph_def.node.add(), graph_def.node.add(), graph_def.node.add()
    s.name, s.op, t.name, t.op = "s", "Const", "t", "Placeholder"
    joined.name, joined.op = "strings", "Add"
    joined.input.extend(["s", "t"])
    joined.attr["T"].type = 7  # DT_STRING
    view = GraphView(graph_def)
    assert constants_second(view, [], {"fetched"}) == 4
    inputs = {name: list(node.input) for name, node in view.nodes.items()}
    for name in ("const_first", "add_const_first", "add_v1_const_first", "const_second"):
        assert inputs[name] == ["x", "c"], name
    assert inputs["with_control"] == ["x", "c", "^x"]
    assert inputs["both_const"] == ["c", "c"] and inputs["sub"] == ["c", "x"]
    assert inputs["fetched"] == ["c", "x"] and inputs["strings"] == ["s", "t"]


def _gelu_file(tmp_path):
    """Keras' tanh GELU as TF freezes it: every Const first."""
    def build():
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        h = tf.raw_op("Mul", x, tf.constant(np.float32(1.5)), name="h")           # dies into the GELU
        half = tf.raw_op("Mul", tf.constant(np.float32(0.5)), h, name="mul")
        cube = tf.raw_op("Pow", h, tf.constant(np.float32(3.0)), name="Pow")
        inner = tf.raw_op("AddV2", h, tf.raw_op("Mul", tf.constant(np.float32(0.044715)), cube, name="mul_1"),
                          name="add")
        t = tf.tanh(tf.raw_op("Mul", tf.constant(np.float32(0.7978846)), inner, name="mul_2"), name="Tanh")
        one_plus = tf.raw_op("AddV2", tf.constant(np.float32(1.0)), t, name="add_1")
        tf.raw_op("Mul", half, one_plus, name="gelu")
        tf.nn.softmax(tf.raw_op("Mul", h, tf.constant(np.float32(0.25))), name="probs")
    path = tmp_path / "gelu.pb"
    path.write_bytes(_graph_def(build).SerializeToString())
    return path


def _gelu64(x):
    h = x.astype(np.float64) * 1.5
    return 0.5 * h * (1 + np.tanh(0.7978846 * (h + 0.044715 * h ** 3)))


@pytest.mark.slow
def test_gelu_runs_in_place_with_the_bits_of_the_file_as_it_is(tmp_path):
    path = _gelu_file(tmp_path)
    # GELU is well conditioned above about -1 (below, 1 + tanh cancels tanh's last bits away)
    x = np.random.default_rng(4).uniform(-1, 3, size=(5, 8)).astype(np.float32)
    x[0, :8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -30.0, 1e30]
    kept = x.copy()
    fetches = ["gelu:0", "probs:0"]
    answers = []
    for optimize in (True, False):
        graph = tf.load(str(path), optimize=optimize)
        with tf.Session(graph=graph) as sess:
            report = optimization_report(sess, fetches, {"x:0": x})
            assert (report is not None and report.changes["constants second"] == 4) == optimize
            runs = [sess.run(fetches, {"x:0": x}) for _ in range(2)]  # the plan again: constants unchanged
        for got in runs[1:]:
            for a, b in zip(got, runs[0]):
                assert_same(a, b)
        answers.append(runs[0])
        assert_same(x, kept)
    for a, b in zip(*answers):
        assert_same(a, b)
    graph_def = graph_pb2.GraphDef.FromString(path.read_bytes())
    with np.errstate(all="ignore"):
        assert_conforms(answers[0][0][1:], _gelu64(x[1:]).astype(np.float32), graph_def, "gelu:0")


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_gelu_in_place_matches_tensorflow(tmp_path, tf_oracle):
    path = _gelu_file(tmp_path)
    x = np.random.default_rng(5).uniform(-1, 3, size=(3, 8)).astype(np.float32)
    with tf.Session(graph=tf.load(str(path))) as sess:
        ours = sess.run(["gelu:0", "probs:0", "mul_1:0"], {"x:0": x})
    graph = tf_oracle.Graph()
    with graph.as_default():
        tf_oracle.compat.v1.import_graph_def(tf_oracle.compat.v1.GraphDef.FromString(path.read_bytes()), name="")
    with tf_oracle.compat.v1.Session(graph=graph) as sess:
        theirs = sess.run(["gelu:0", "probs:0", "mul_1:0"], {"x:0": x})
    graph_def = graph_pb2.GraphDef.FromString(path.read_bytes())
    for fetch, a, b in zip(["gelu:0", "probs:0", "mul_1:0"], ours, theirs):
        assert_conforms(a, b, graph_def, fetch)


def test_in_place_steps_never_overwrite_a_value_still_read():
    """Mul, Sub, Tanh and Softmax written into a dead input: a view of it, a fetch, a feed and a
    constant keep their values, on every run of the plan."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        c = tf.constant(np.array([1.0, -2.0, 3.0], np.float32))
        on_feed = tf.tanh(x)                          # x is fed: never overwritten
        doubled = x * 2.0
        view = tf.reshape(doubled, [3, 2])            # shares doubled's memory
        scaled = doubled * 3.0                        # doubled is dead after this, but viewed
        shifted = scaled - c                          # scaled dead: may be overwritten
        squashed = tf.tanh(shifted)                   # shifted dead: may be overwritten
        probs = tf.nn.softmax(squashed * 4.0)
        on_const = c * 2.0                            # c is a constant: never overwritten
    xv = np.array([[-1.0, 0.5, 4.0], [2.0, -3.0, 0.25]], np.float32)
    kept = xv.copy()
    with tf.Session(graph=g) as sess:
        for _ in range(2):
            got = sess.run([on_feed, view, squashed, probs, on_const], {x: xv})
            d = kept * np.float32(2)
            s = np.tanh(d * np.float32(3) - np.array([1, -2, 3], np.float32))
            e = np.exp(s * np.float32(4) - np.max(s * np.float32(4), axis=-1, keepdims=True))
            assert_same(got[0], np.tanh(kept))
            assert_same(got[1], d.reshape(3, 2))
            assert_same(got[2], s)
            assert_same(got[3], e / np.sum(e, axis=-1, keepdims=True))
            assert_same(got[4], np.array([2.0, -4.0, 6.0], np.float32))
            assert_same(xv, kept)
