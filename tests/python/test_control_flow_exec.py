"""The Session's control-flow path: chosen only when needed, and hostile loop graphs refused
with one clear line (cycles that are not loops, frames that never meet, endless loops)."""

import numpy as np
import pytest

import graphdef
from graphdef.client.control_flow_exec import ControlFlowPlan
from graphdef.client.python_engine import _Plan
from graphdef.framework.errors import InvalidArgumentError
from graphdef.wire.serialize import GraphFileError, ndarray_to_proto


def _plan_kind(graph, fetch, feeds):
    # the numpy engine's two executors are the subject here
    with graphdef.Session(graph=graph, engine="python") as sess:
        sess.run(fetch, feeds)
        (plan,) = sess._plans.values()
        return type(plan)


def test_plain_fetches_keep_the_fast_plan_even_in_a_graph_with_loops():
    with graphdef.Graph().as_default() as g:
        x = graphdef.placeholder(graphdef.float32, [], name="x")
        plain = x * 2.0
        looped = graphdef.while_loop(lambda v: v < 100.0, lambda v: v * 3.0, [x])
    assert _plan_kind(g, plain, {x: 1.0}) is _Plan
    assert _plan_kind(g, looped, {x: 1.0}) is ControlFlowPlan


def _node(graph_def, name, op, inputs=(), **attrs):
    node = graph_def.node.add(name=name, op=op)
    node.input.extend(inputs)
    for key, value in attrs.items():
        if isinstance(value, graphdef.DType):
            node.attr[key].type = value.enum
        elif isinstance(value, bool):
            node.attr[key].b = value
        elif isinstance(value, str):
            node.attr[key].s = value.encode()
        else:
            node.attr[key].i = value
    return node


def _counting_loop(limit_op="Less", back_edge="next"):
    """A TF1 loop `i = 0; while i < 5: i += 1` written node by node, back edge and all."""
    gd = graphdef.GraphDef()
    with graphdef.Graph().as_default():
        for name, value in (("zero", 0), ("five", 5), ("one", 1)):
            gd.node.add().CopyFrom(graphdef.constant(value, name=name).op.node_def)
    i32 = graphdef.int32
    _node(gd, "enter", "Enter", ["zero"], T=i32, frame_name="loop")
    _node(gd, "merge", "Merge", ["enter", back_edge], T=i32, N=2)
    _node(gd, "five_in", "Enter", ["five"], T=i32, frame_name="loop", is_constant=True)
    _node(gd, "one_in", "Enter", ["one"], T=i32, frame_name="loop", is_constant=True)
    _node(gd, "less", limit_op, ["merge", "five_in"], T=i32)
    _node(gd, "cond", "LoopCond", ["less"])
    _node(gd, "switch", "Switch", ["merge", "cond"], T=i32)
    _node(gd, "body", "Identity", ["switch:1"], T=i32)
    _node(gd, "add", "AddV2", ["body", "one_in"], T=i32)
    _node(gd, "next", "NextIteration", ["add"], T=i32)
    _node(gd, "exit", "Exit", ["switch"], T=i32)
    return gd


def test_a_loop_written_node_by_node_imports_and_runs():
    graph = graphdef.Graph()
    graphdef.import_graph_def(_counting_loop(), name="", graph=graph)
    with graphdef.Session(graph=graph) as sess:
        assert sess.run("exit:0") == 5


def test_a_loop_that_never_ends_is_stopped(monkeypatch):
    monkeypatch.setenv("GRAPHDEF_MAX_WHILE_ITERATIONS", "1000")
    graph = graphdef.Graph()
    graphdef.import_graph_def(_counting_loop(limit_op="NotEqual"), name="", graph=graph)
    with graphdef.Session(graph=graph) as sess:
        assert sess.run("exit:0") == 5
    graph = graphdef.Graph()
    gd = _counting_loop(limit_op="GreaterEqual")  # 0 >= 5 is false at once: zero iterations
    graphdef.import_graph_def(gd, name="", graph=graph)
    with graphdef.Session(graph=graph) as sess:
        assert sess.run("exit:0") == 0
    gd = _counting_loop(limit_op="NotEqual")
    for node in gd.node:
        if node.name == "five":
            node.attr["value"].tensor.CopyFrom(ndarray_to_proto(np.int32(-1)))  # counting up never meets -1
    graph = graphdef.Graph()
    graphdef.import_graph_def(gd, name="", graph=graph)
    with graphdef.Session(graph=graph) as sess, pytest.raises(InvalidArgumentError,
                                                              match="frame 'loop' ran 1000 iterations"):
        sess.run("exit:0")


def test_a_cycle_that_is_not_a_loop_back_edge_is_refused():
    gd = _counting_loop()
    for node in gd.node:
        if node.name == "next":
            node.op = "Identity"  # the same cycle, but through an Identity
    with pytest.raises(GraphFileError, match="cycle"):
        graphdef.import_graph_def(gd, name="", graph=graphdef.Graph())


def test_a_merge_fed_only_by_back_edges_is_refused():
    gd = _counting_loop(back_edge="next")
    for node in gd.node:
        if node.name == "merge":
            node.input[:] = ["next", "next"]
    with pytest.raises(GraphFileError, match="every input is a NextIteration back edge"):
        graphdef.import_graph_def(gd, name="", graph=graphdef.Graph())


def test_a_back_edge_of_another_dtype_is_refused():
    gd = _counting_loop()
    _node(gd, "other", "Const", dtype=graphdef.float32).attr["value"].tensor.CopyFrom(_float_tensor())
    _node(gd, "other_next", "NextIteration", ["other"], T=graphdef.float32)
    for node in gd.node:
        if node.name == "merge":
            node.input[1] = "other_next"
    with pytest.raises(GraphFileError, match="merge.*int32.*other_next"):
        graphdef.import_graph_def(gd, name="", graph=graphdef.Graph())


def _float_tensor():
    return ndarray_to_proto(np.float32(1.0))


def test_inputs_from_two_frames_are_refused_at_run_time():
    gd = _counting_loop()
    _node(gd, "mixed", "AddV2", ["exit", "body"], T=graphdef.int32)  # an outside op reading inside the loop
    graph = graphdef.Graph()
    graphdef.import_graph_def(gd, name="", graph=graph)
    with graphdef.Session(graph=graph) as sess, pytest.raises(InvalidArgumentError,
                                                              match="'mixed' .* different loop frames"):
        sess.run("mixed:0")
