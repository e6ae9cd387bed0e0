"""Building graphs: names, scopes, the default graph, static shapes and dtypes, laziness."""

import numpy as np
import pytest

import graphdef as tf


def test_bare_as_default_makes_the_graph_default_as_the_seed_listing_expects():
    g = tf.Graph()
    g.as_default()
    try:
        assert tf.get_default_graph() is g
        c = tf.Constant(15)
        assert c.graph is g
    finally:
        tf.reset_default_graph()
    assert tf.get_default_graph() is not g


def test_as_default_as_context_manager_restores_the_previous_graph():
    outer = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default() as entered:
        assert entered is g and tf.get_default_graph() is g
    assert tf.get_default_graph() is outer


def test_tensor_names_types_and_identity_hashing(graph):
    a = tf.constant(15, name="a")
    b = tf.constant(5.0)
    assert a.name == "a:0" and a.op.name == "a" and a.op.type == "Const"
    assert a.dtype is tf.int32 and b.dtype is tf.float32
    assert tf.constant(np.float64(1)).dtype is tf.float64
    assert tf.constant(2**40).dtype is tf.int64
    assert {a: 1, b: 2}[a] == 1
    assert a.shape == [] and tf.constant([[1, 2, 3]]).shape == [1, 3]


def test_unique_names_in_scopes_follow_tensorflow(graph):
    with tf.name_scope("scope"):
        first = tf.add(1, 2)
        second = tf.add(1, 2)
        with tf.name_scope("inner") as inner:
            nested = tf.multiply(3, 4)
    again = tf.add(1, 2)
    assert first.op.name == "scope/Add"
    assert second.op.name == "scope/Add_1"
    assert nested.op.name == "scope/inner/Mul" and inner == "scope/inner/"
    assert again.op.name == "Add"
    with tf.name_scope("scope"):
        assert tf.add(1, 2).op.name == "scope_1/Add"


def test_operators_build_tensorflow_ops(graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.ones((3, 2), np.float32))
    cases = {
        x + 1: "AddV2", x - 1: "Sub", x * 2: "Mul", x / 2: "RealDiv", x ** 2: "Pow",
        -x: "Neg", abs(x): "Abs", x @ w: "MatMul", 1 - x: "Sub", 2 / x: "RealDiv",
    }
    for tensor, op_type in cases.items():
        assert tensor.op.type == op_type
        assert tensor.dtype is tf.float32
    assert (x @ w).shape == [None, 2]
    assert (1 - x).op.inputs[0].op.type == "Const"  # reflected: the constant is the left operand


def test_integer_division_casts_like_tensorflow(graph):
    res = tf.divide(tf.constant(15), tf.constant(4), name="Divide")
    assert res.op.name == "Divide" and res.op.type == "RealDiv" and res.dtype is tf.float64
    assert [i.op.type for i in res.op.inputs] == ["Cast", "Cast"]
    assert [i.op.name for i in res.op.inputs] == ["Divide/Cast", "Divide/Cast_1"]


def test_matmul_shape_mismatch_names_both_shapes(graph):
    a = tf.constant(np.zeros((2, 3), np.float32))
    b = tf.constant(np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError, match=r"\[2,3\] by \[4,5\]"):
        tf.matmul(a, b)


def test_broadcast_mismatch_and_dtype_mismatch_raise_at_build_time(graph):
    with pytest.raises(ValueError, match=r"\[2,3\] and \[4\]"):
        tf.add(tf.zeros([2, 3]), tf.zeros([4]))
    with pytest.raises(TypeError, match="int32.*float32|float32.*int32"):
        tf.add(tf.constant(1), tf.constant(1.0))


def test_static_shapes_with_unknown_dims(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    assert tf.reduce_sum(x, axis=1).shape == [None]
    assert tf.reduce_mean(x, axis=-1, keepdims=True).shape == [None, 1]
    assert tf.reshape(x, [-1, 2]).shape == [None, 2]
    assert tf.reshape(tf.zeros([6, 4]), [-1, 8]).shape == [3, 8]
    assert tf.transpose(x).shape == [4, None]
    assert tf.placeholder(tf.float32).shape.ndims is None
    with pytest.raises(ValueError, match="cannot reshape"):
        tf.reshape(tf.zeros([6, 4]), [5, -1])


def test_graphs_are_lazy(graph):
    huge = tf.zeros([10**12, 10**12])
    assert huge.shape == [10**12, 10**12] and huge.op.type == "Fill"


def test_variable_nodes_follow_tf1_layout(graph):
    w = tf.Variable([[1.0, 2.0]], name="w")
    names = {op.name: op.type for op in graph.get_operations()}
    assert names == {"w/initial_value": "Const", "w": "VariableV2", "w/Assign": "Assign", "w/read": "Identity"}
    assert w.name == "w:0" and w.shape == [1, 2] and w.dtype is tf.float32
    assert (w * 2).op.inputs[0].op.name == "w/read"
    with pytest.raises(ValueError, match=r"shape \[3\] to variable 'w' of shape \[1,2\]"):
        tf.assign(w, [1.0, 2.0, 3.0])


def test_a_tensor_is_not_a_python_bool(graph):
    with pytest.raises(TypeError, match="bool"):
        bool(tf.constant(1))


def test_control_dependencies_are_recorded(graph):
    a = tf.constant(1, name="a")
    with tf.control_dependencies([a]):
        b = tf.constant(2, name="b")
    assert b.op.control_inputs == (a.op,)
    assert list(graph.as_graph_def().node[1].input) == ["^a"]


def test_inputs_from_another_graph_are_refused(graph):
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1)
    with pytest.raises(ValueError, match="another graph"):
        tf.add(foreign, 1)
