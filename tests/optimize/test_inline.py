"""Function calls inlined before the optimizer's passes (graphdef/optimize/inline_calls.py): the
body's nodes take the call's place, the result is what the call computed, and a graph with a
function use that cannot be inlined stays as it is."""

import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.optimize import optimize
from graphdef.optimize.at_load import eligible
from graphdef.optimize.inline_calls import inline_calls

X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
W = np.array([0.5, -2.0, 3.0], np.float32)


def _const(graph_def, name, value):
    node = graph_def.node.add(name=name, op="Const")
    node.attr["dtype"].type = 1
    tensor = node.attr["value"].tensor
    tensor.dtype = 1
    for size in value.shape:
        tensor.tensor_shape.dim.add(size=size)
    tensor.tensor_content = value.tobytes()


def _scaled_graph(body_op="Mul"):
    """x -> call(w, x) = Identity(w) * x (as Keras' frozen functions read their weight), then Relu;
    the function also runs its weight read for its effect (a control output)."""
    g = graph_pb2.GraphDef()
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = 1
    _const(g, "w", W)
    f = g.library.function.add()
    f.signature.name = "scale"
    f.signature.input_arg.add(name="weight", type=1)
    f.signature.input_arg.add(name="value", type=1)
    f.signature.output_arg.add(name="out", type=1)
    f.signature.control_output.append("read")
    read = f.node_def.add(name="read", op="Identity", input=["weight"])
    read.attr["T"].type = 1
    product = f.node_def.add(name="product", op=body_op, input=["value", "read:output:0"])
    product.attr["T"].type = 1
    f.ret["out"] = "product:z:0"
    f.control_ret["read"] = "read"
    call = g.node.add(name="call", op="StatefulPartitionedCall", input=["w", "x"])
    call.attr["f"].func.name = "scale"
    call.attr["Tin"].list.type.extend([1, 1])
    call.attr["Tout"].list.type.append(1)
    relu = g.node.add(name="relu", op="Relu", input=["call"])
    relu.attr["T"].type = 1
    return g


def _run(graph_def, fetch):
    path_graph = tf.Graph()
    with path_graph.as_default():
        tf.import_graph_def(graph_def, name="")
    with tf.Session(graph=path_graph) as session:
        return session.run(fetch, {"x:0": X})


def test_a_call_is_replaced_by_its_body():
    inlined, count = inline_calls(_scaled_graph())
    assert count == 1
    assert not inlined.library.function
    ops = {n.name: n.op for n in inlined.node}
    assert ops["call/product"] == "Mul" and ops["call/read"] == "Identity"
    assert "call" not in ops  # read only by Relu: Relu reads the body's result itself
    assert list(next(n for n in inlined.node if n.name == "relu").input) == ["call/product:0"]
    np.testing.assert_array_equal(_run(inlined, "relu:0"), np.maximum(X * W, 0))


def test_a_fetched_call_keeps_its_name():
    inlined, _ = inline_calls(_scaled_graph(), protected={"call"})
    call = next(n for n in inlined.node if n.name == "call")
    assert call.op == "IdentityN"
    assert list(call.input) == ["call/product:0", "^call/read"]
    np.testing.assert_array_equal(_run(inlined, "call:0"), X * W)


@pytest.mark.slow
def test_a_graph_of_inlinable_calls_is_optimized_at_load(tmp_path):
    path = tmp_path / "model.pb"
    path.write_bytes(_scaled_graph().SerializeToString())
    assert eligible(_scaled_graph())
    graph = tf.load(str(path))
    with tf.Session(graph=graph) as session:
        np.testing.assert_array_equal(session.run("relu:0", {"x:0": X}), np.maximum(X * W, 0))
        np.testing.assert_array_equal(session.run("call:0", {"x:0": X}), X * W)
    optimized, report = optimize(_scaled_graph(), outputs=["relu"], for_tensorflow=False)
    assert report.changes.get("inline calls") == 1
    assert not optimized.library.function


def test_a_body_with_an_op_that_keeps_state_is_not_inlined():
    g = _scaled_graph()
    g.library.function[0].node_def[1].op = "AssignAddVariableOp"
    inlined, count = inline_calls(g)
    assert inlined is g and count == 0
    assert not eligible(g)


@pytest.mark.parametrize("name", ["call/product", "call/read"])
def test_a_body_node_whose_name_is_taken_stops_inlining(name):
    g = _scaled_graph()
    taken = g.node.add(name=name, op="NoOp")
    assert taken.name == name
    inlined, count = inline_calls(g)
    assert inlined is g and count == 0


@pytest.mark.parametrize("attr", ["f", "Tout"])
def test_a_call_without_its_attrs_is_left_alone_and_unchanged(attr):
    g = _scaled_graph()
    del next(n for n in g.node if n.name == "call").attr[attr]
    before = g.SerializeToString()
    inlined, count = inline_calls(g)
    assert inlined is g and count == 0
    assert g.SerializeToString() == before


def test_at_load_a_body_op_that_flows_control_keeps_the_graph_as_it_is():
    # inline_calls itself inlines a body with an Exit (the optimizer then only prunes); the at-load
    # check reads the body's ops in place and refuses it, as it refuses a graph's own Exit
    g = _scaled_graph()
    body = g.library.function[0]
    exit_node = body.node_def.add(name="leave", op="Exit", input=["product:z:0"])
    exit_node.attr["T"].type = 1
    body.ret["out"] = "leave:output:0"
    assert inline_calls(g)[1] == 1
    assert not eligible(g)
